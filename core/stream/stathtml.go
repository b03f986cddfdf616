package stream

import (
	"bytes"
	"html"
	"strconv"
	"strings"
	"syscall"
	"time"

	"goha/core"
)

// The stats page in HTML, laid out as HAProxy 2.6's: the process's
// information, then per proxy a title table and a table of its frontend,
// servers and backend, with the admin form's checkboxes and actions when
// `stats admin` allows them. The cells hold show stat's fields.

type htmlPage struct {
	proc  *Process
	px    *proxy
	sq    statsQuery
	admin bool
	flt   StatFilter
	now   time.Time
	b     bytes.Buffer
	d     statDumper
}

const htmlStyle = `<style type="text/css"><!--
body { font-family: arial, helvetica, sans-serif; font-size: 12px; font-weight: normal; color: black; background: white;}
th,td { font-size: 10px;}
h1 { font-size: x-large; margin-bottom: 0.5em;}
h2 { font-family: helvetica, arial; font-size: x-large; font-weight: bold; font-style: italic; color: #6020a0; margin-top: 0em; margin-bottom: 0em;}
h3 { font-family: helvetica, arial; font-size: 16px; font-weight: bold; color: #b00040; background: #e8e8d0; margin-top: 0em; margin-bottom: 0em;}
li { margin-top: 0.25em; margin-right: 2em;}
.hr {margin-top: 0.25em; border-color: black; border-bottom-style: solid;}
.titre	{background: #20D0D0;color: #000000; font-weight: bold; text-align: center;}
.total	{background: #20D0D0;color: #ffff80;}
.frontend	{background: #e8e8d0;}
.socket	{background: #d0d0d0;}
.backend	{background: #e8e8d0;}
.active_down		{background: #ff9090;}
.active_going_up		{background: #ffd020;}
.active_going_down	{background: #ffffa0;}
.active_up		{background: #c0ffc0;}
.active_nolb		{background: #20a0ff;}
.active_draining		{background: #20a0FF;}
.active_no_check		{background: #e0e0e0;}
.backup_down		{background: #ff9090;}
.backup_going_up		{background: #ff80ff;}
.backup_going_down	{background: #c060ff;}
.backup_up		{background: #b0d0ff;}
.backup_nolb		{background: #90b0e0;}
.backup_draining		{background: #cc9900;}
.backup_no_check		{background: #e0e0e0;}
.maintain	{background: #c07820;}
.rls      {letter-spacing: 0.2em; margin-right: 1px;}
a.px:link {color: #ffff40; text-decoration: none;}a.px:visited {color: #ffff40; text-decoration: none;}a.px:hover {color: #ffffff; text-decoration: none;}a.lfsb:link {color: #000000; text-decoration: none;}a.lfsb:visited {color: #000000; text-decoration: none;}a.lfsb:hover {color: #505050; text-decoration: none;}
table.tbl { border-collapse: collapse; border-style: none;}
table.tbl td { text-align: right; border-width: 1px 1px 1px 1px; border-style: solid solid solid solid; padding: 2px 3px; border-color: gray; white-space: nowrap;}
table.tbl td.ac { text-align: center;}
table.tbl th { border-width: 1px; border-style: solid solid solid solid; border-color: gray;}
table.tbl th.pxname { background: #b00040; color: #ffff40; font-weight: bold; border-style: solid solid none solid; padding: 2px 3px; white-space: nowrap;}
table.tbl th.empty { border-style: none; empty-cells: hide; background: white;}
table.tbl th.desc { background: white; border-style: solid solid none solid; text-align: left; padding: 2px 3px;}
table.lgd { border-collapse: collapse; border-width: 1px; border-style: none none none solid; border-color: black;}
table.lgd td { border-width: 1px; border-style: solid solid solid solid; border-color: gray; padding: 2px;}
table.lgd td.noborder { border-style: none; padding: 2px; white-space: nowrap;}
table.det { border-collapse: collapse; border-style: none;}
table.det th { text-align: left; border-width: 0px; padding: 0px 1px 0px 0px; font-style:normal;font-size:11px;font-weight:bold;font-family: sans-serif;}
table.det td { text-align: right; border-width: 0px; padding: 0px 0px 0px 4px; white-space: nowrap; font-style:normal;font-size:11px;font-weight:normal;}
u {text-decoration:none; border-bottom: 1px dotted black;}
div.tips {
 display:block;
 visibility:hidden;
 z-index:2147483647;
 position:absolute;
 padding:2px 4px 3px;
 background:#f0f060; color:#000000;
 border:1px solid #7040c0;
 white-space:nowrap;
 font-style:normal;font-size:11px;font-weight:normal;
 -moz-border-radius:3px;-webkit-border-radius:3px;border-radius:3px;
 -moz-box-shadow:gray 2px 2px 3px;-webkit-box-shadow:gray 2px 2px 3px;box-shadow:gray 2px 2px 3px;
}
u:hover div.tips {visibility:visible;}
@media (prefers-color-scheme: dark) {
 body { font-family: arial, helvetica, sans-serif; font-size: 12px; font-weight: normal; color: #e8e6e3; background: #131516;}
 h1 { color: #a265e0!important; }
 h2 { color: #a265e0; }
 h3 { color: #ff5190; background-color: #3e3e1f; }
 a { color: #3391ff; }
 input { background-color: #2f3437; }
 .hr { border-color: #8c8273; }
 .titre { background-color: #1aa6a6; color: #e8e6e3; }
 .frontend {background: #2f3437;}
 .socket {background: #2a2d2f;}
 .backend {background: #2f3437;}
 .active_down {background: #760000;}
 .active_going_up {background: #b99200;}
 .active_going_down {background: #6c6c00;}
 .active_up {background: #165900;}
 .active_nolb {background: #006ab9;}
 .active_draining {background: #006ab9;}
 .active_no_check {background: #2a2d2f;}
 .backup_down {background: #760000;}
 .backup_going_up {background: #7f007f;}
 .backup_going_down {background: #580092;}
 .backup_up {background: #2e3234;}
 .backup_nolb {background: #1e3c6a;}
 .backup_draining {background: #a37a00;}
 .backup_no_check {background: #2a2d2f;}
 .maintain {background: #9a601a;}
 a.px:link {color: #d8d83b; text-decoration: none;}
 a.px:visited {color: #d8d83b; text-decoration: none;}
 a.px:hover {color: #ffffff; text-decoration: none;}
 a.lfsb:link {color: #e8e6e3; text-decoration: none;}
 a.lfsb:visited {color: #e8e6e3; text-decoration: none;}
 a.lfsb:hover {color: #b5afa6; text-decoration: none;}
 table.tbl th.empty { background-color: #181a1b; }
 table.tbl th.desc { background: #181a1b; }
 table.tbl th.pxname { background-color: #8d0033; color: #ffff46; }
 table.tbl th { border-color: #808080; }
 table.tbl td { border-color: #808080; }
 u {text-decoration:none; border-bottom: 1px dotted #e8e6e3;}
 div.tips {
  background:#8e8e0d;
  color:#e8e6e3;
  border-color: #4e2c86;
  -moz-box-shadow: #60686c 2px 2px 3px;
  -webkit-box-shadow: #60686c 2px 2px 3px;
  box-shadow: #60686c 2px 2px 3px;
 }
}
-->
</style></head>
`

// statusMessages are the banners of a POST's outcome (;st=XXXX).
var statusMessages = map[string]struct{ class, text string }{
	"DONE": {"active_up", "Action processed successfully."},
	"NONE": {"active_going_down", "Nothing has changed."},
	"PART": {"active_going_down", "Action partially processed.<br>Some server names are probably unknown or ambiguous (duplicated names in the backend)."},
	"ERRP": {"active_down", "Action not processed because of invalid parameters.<ul><li>The action is maybe unknown.</li><li>Invalid key parameter (empty or too long).</li><li>The backend name is probably unknown or ambiguous (duplicated names).</li><li>Some server names are probably unknown or ambiguous (duplicated names in the backend).</li></ul>"},
	"EXCD": {"active_down", "<b>Action not processed : the buffer couldn't store all the data.<br>You should retry with less servers at a time.</b>"},
	"DENY": {"active_down", "<b>Action denied.</b>"},
	"IVAL": {"active_down", "<b>Invalid requests (unsupported method or chunked encoded request).</b>"},
	"UNKN": {"active_no_check", "Unexpected result."},
}

func (h *htmlPage) w(s ...string) {
	for _, x := range s {
		h.b.WriteString(x)
	}
}

func esc(s string) string { return html.EscapeString(s) }

func (h *htmlPage) render() []byte {
	sc := h.px.stats.conf
	g := &h.proc.Conf.Global
	version := " version " + core.Version + ", released " + core.ReleaseDate
	if sc.HideVersion {
		version = ""
	}
	node, desc := "", ""
	if sc.ShowNode {
		node = sc.Node
		if node == "" {
			node = g.Node
		}
	}
	if sc.ShowDesc {
		desc = sc.Desc
		if desc == "" {
			desc = g.Description
		}
	}
	h.w("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\"\n\"http://www.w3.org/TR/html4/loose.dtd\">\n",
		"<html><head><title>Statistics Report for HAProxy")
	if sc.ShowNode {
		h.w(" on ", esc(node))
	}
	h.w("</title>\n<link rel=\"icon\" href=\"data:,\">\n",
		"<meta http-equiv=\"content-type\" content=\"text/html; charset=iso-8859-1\">\n", htmlStyle)
	h.info(version, node, desc)
	h.d = statDumper{proc: h.proc, f: h.flt, now: h.now, legends: sc.Legends}
	for _, p := range h.proc.Conf.Proxies {
		if (!p.IsFrontend() && !p.IsBackend()) || !h.flt.shows(p) {
			continue
		}
		h.proxy(p)
	}
	h.w("</body></html>\n")
	return h.b.Bytes()
}

// opts are the page options links keep: ;up, ;norefresh and the scope.
func (h *htmlPage) opts(up, norefresh bool) string {
	s := ""
	if up {
		s += ";up"
	}
	if norefresh {
		s += ";norefresh"
	}
	return s + h.scopeSuffix()
}

func (h *htmlPage) scopeSuffix() string {
	if h.sq.scope == "" {
		return ""
	}
	return "?scope=" + h.sq.scope
}

func (h *htmlPage) info(version, node, desc string) {
	sc := h.px.stats.conf
	var rl syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	up := int64(h.now.Sub(h.proc.Start) / time.Second)
	uri := esc(sc.URI)
	h.w("<body><h1><a href=\"http://www.haproxy.org/\" style=\"text-decoration: none;\">HAProxy", esc(version), "</a></h1>\n",
		"<h2>Statistics Report for pid ", strconv.Itoa(h.proc.PID))
	if sc.ShowNode {
		h.w(" on ", esc(node))
	}
	if sc.ShowDesc {
		h.w(": ", esc(desc))
	}
	h.w("</h2>\n<hr width=\"100%\" class=\"hr\">\n<h3>&gt; General process information</h3>\n",
		"<table border=0><tr><td align=\"left\" nowrap width=\"1%\">\n",
		"<p><b>pid = </b> ", strconv.Itoa(h.proc.PID), " (process #1, nbproc = 1, nbthread = ", strconv.Itoa(h.proc.Threads), ")<br>\n",
		"<b>uptime = </b> ", strconv.FormatInt(up/86400, 10), "d ", strconv.FormatInt(up%86400/3600, 10), "h",
		twoDigits(up%3600/60), "m", twoDigits(up%60), "s<br>\n",
		"<b>system limits:</b> memmax = unlimited; ulimit-n = ", strconv.FormatUint(rl.Cur, 10), "<br>\n",
		"<b>maxsock = </b> ", strconv.FormatUint(rl.Cur, 10), "; <b>maxconn = </b> ", strconv.Itoa(h.proc.Conf.GlobalMaxConn()), "<br>\n",
		"current conns = ", strconv.FormatInt(h.proc.curConns.Load(), 10), "<br>\n",
		"</td><td align=\"center\" nowrap>\n<table class=\"lgd\"><tr>\n",
		"<td class=\"active_up\">&nbsp;</td><td class=\"noborder\">active UP </td><td class=\"backup_up\">&nbsp;</td><td class=\"noborder\">backup UP </td></tr><tr>\n",
		"<td class=\"active_going_down\"></td><td class=\"noborder\">active UP, going down </td><td class=\"backup_going_down\"></td><td class=\"noborder\">backup UP, going down </td></tr><tr>\n",
		"<td class=\"active_going_up\"></td><td class=\"noborder\">active DOWN, going up </td><td class=\"backup_going_up\"></td><td class=\"noborder\">backup DOWN, going up </td></tr><tr>\n",
		"<td class=\"active_down\"></td><td class=\"noborder\">active or backup DOWN &nbsp;</td><td class=\"active_no_check\"></td><td class=\"noborder\">not checked </td></tr><tr>\n",
		"<td class=\"maintain\"></td><td class=\"noborder\" colspan=\"3\">active or backup DOWN for maintenance (MAINT) &nbsp;</td></tr><tr>\n",
		"<td class=\"active_draining\"></td><td class=\"noborder\" colspan=\"3\">active or backup SOFT STOPPED for maintenance &nbsp;</td></tr></table>\n",
		"Note: \"NOLB\"/\"DRAIN\" = UP with load-balancing disabled.</td>",
		"<td align=\"left\" valign=\"top\" nowrap width=\"1%\"><b>Display option:</b><ul style=\"margin-top: 0.25em;\">",
		"<li><form method=\"GET\">Scope : <input value=\"", h.sq.scope, "\" name=\"scope\" size=\"8\" maxlength=\"31\" tabindex=\"1\"/></form>\n")
	if h.sq.up {
		h.w("<li><a href=\"", uri, h.opts(false, h.sq.noRefresh), "\">Show all servers</a><br>\n")
	} else {
		h.w("<li><a href=\"", uri, h.opts(true, h.sq.noRefresh), "\">Hide 'DOWN' servers</a><br>\n")
	}
	if sc.Refresh > 0 {
		if h.sq.noRefresh {
			h.w("<li><a href=\"", uri, h.opts(h.sq.up, false), "\">Enable refresh</a><br>\n")
		} else {
			h.w("<li><a href=\"", uri, h.opts(h.sq.up, true), "\">Disable refresh</a><br>\n")
		}
	}
	h.w("<li><a href=\"", uri, h.opts(h.sq.up, h.sq.noRefresh), "\">Refresh now</a><br>\n")
	norefresh := ""
	if sc.Refresh > 0 {
		norefresh = ";norefresh"
	}
	h.w("<li><a href=\"", uri, ";csv", norefresh, h.scopeSuffix(), "\">CSV export</a><br>\n",
		"<li><a href=\"", uri, ";json", norefresh, h.scopeSuffix(), "\">JSON export</a><br>\n",
		"</ul></td><td align=\"left\" valign=\"top\" nowrap width=\"1%\"><b>External resources:</b><ul style=\"margin-top: 0.25em;\">\n",
		"<li><a href=\"http://www.haproxy.org/\">Primary site</a><br>\n",
		"<li><a href=\"http://www.haproxy.org/download/2.6/\">Updates (v2.6)</a><br>\n",
		"<li><a href=\"http://docs.haproxy.org/2.6/\">Online manual</a><br>\n",
		"</ul></td></tr></table>\n")
	if h.sq.st != "" {
		m := statusMessages[h.sq.st]
		h.w("<p><div class=", m.class, "><a class=lfsb href=\"", uri, h.opts(h.sq.up, h.sq.noRefresh),
			"\" title=\"Remove this message\">[X]</a> ", m.text, "</div>\n")
	}
	h.w("<p>\n")
}

func twoDigits(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// hasServers says whether the admin form applies to p.
func (h *htmlPage) hasServers(p *core.Proxy) bool {
	return h.admin && p.IsBackend() && len(p.ServerList()) > 0
}

func (h *htmlPage) proxy(p *core.Proxy) {
	name := esc(p.Name)
	form := h.hasServers(p)
	if form {
		h.w("<form method=\"post\">")
	}
	legends := h.px.stats.conf.Legends
	h.w("<table class=\"tbl\" width=\"100%\">\n<tr class=\"titre\"><th class=\"pxname\" width=\"10%\">",
		"<a name=\"", name, "\"></a>")
	if legends {
		h.w("<u>")
	}
	h.w("<a class=px href=\"#", name, "\">", name, "</a>")
	if legends {
		h.w("<div class=tips>cap: ", core.CapName(p.Cap), ", mode: ", p.Mode.String(), ", id: ", strconv.Itoa(p.ID), "</div></u>")
	}
	if p.Description != "" {
		h.w("</th><th class=\"desc\" width=\"90%\">", esc(p.Description), "</th>")
	} else {
		h.w("</th><th class=\"empty\" width=\"90%\"></th>")
	}
	h.w("</tr>\n</table>\n<table class=\"tbl\" width=\"100%\">\n<tr class=\"titre\">")
	if h.admin {
		if form {
			h.w("<th rowspan=2 width=1><input type=\"checkbox\" onclick=\"for(c in document.getElementsByClassName('", name,
				"-checkbox')) document.getElementsByClassName('", name, "-checkbox').item(c).checked = this.checked\"></th>")
		} else {
			h.w("<th rowspan=2></th>")
		}
	}
	h.w("<th rowspan=2></th><th colspan=3>Queue</th><th colspan=3>Session rate</th><th colspan=6>Sessions</th>",
		"<th colspan=2>Bytes</th><th colspan=2>Denied</th><th colspan=3>Errors</th><th colspan=2>Warnings</th>",
		"<th colspan=9>Server</th></tr>\n<tr class=\"titre\">",
		"<th>Cur</th><th>Max</th><th>Limit</th><th>Cur</th><th>Max</th><th>Limit</th><th>Cur</th><th>Max</th>",
		"<th>Limit</th><th>Total</th><th>LbTot</th><th>Last</th><th>In</th><th>Out</th><th>Req</th><th>Resp</th>",
		"<th>Req</th><th>Conn</th><th>Resp</th><th>Retr</th><th>Redis</th><th>Status</th><th>LastChk</th>",
		"<th>Wght</th><th>Act</th><th>Bck</th><th>Chk</th><th>Dwn</th><th>Dwntme</th><th>Thrtle</th>\n</tr>")
	d := &h.d
	if p.IsFrontend() {
		d.frontendRow(p)
		h.frontend()
	}
	if p.IsBackend() {
		for _, s := range p.ServerList() {
			adm := s.AdminState()
			if h.flt.Up && (adm&core.AdminMaint != 0 || s.OpState() == core.OpStopped) {
				continue
			}
			if h.flt.NoMaint && adm&core.AdminMaint != 0 {
				continue
			}
			d.serverRow(s)
			h.server(p)
		}
		d.backendRow(p)
		h.backend()
	}
	h.w("</table>")
	if form {
		h.w("Choose the action to perform on the checked servers : <select name=action>",
			"<option value=\"\"></option>",
			"<option value=\"ready\">Set state to READY</option>",
			"<option value=\"drain\">Set state to DRAIN</option>",
			"<option value=\"maint\">Set state to MAINT</option>",
			"<option value=\"dhlth\">Health: disable checks</option>",
			"<option value=\"ehlth\">Health: enable checks</option>",
			"<option value=\"hrunn\">Health: force UP</option>",
			"<option value=\"hnolb\">Health: force NOLB</option>",
			"<option value=\"hdown\">Health: force DOWN</option>",
			"<option value=\"dagent\">Agent: disable checks</option>",
			"<option value=\"eagent\">Agent: enable checks</option>",
			"<option value=\"arunn\">Agent: force UP</option>",
			"<option value=\"adown\">Agent: force DOWN</option>",
			"<option value=\"shutdown\">Kill Sessions</option>",
			"</select><input type=\"hidden\" name=\"b\" value=\"#", strconv.Itoa(p.ID), "\">",
			"&nbsp;<input type=\"submit\" value=\"Apply\"></form>")
	}
	h.w("<p>\n")
}

// f is field i of the current row as the page shows it: "" when unset.
func (h *htmlPage) f(i int) string {
	v := &h.d.row[i]
	if !v.set {
		return ""
	}
	if v.str {
		if v.b != nil {
			return esc(string(v.b))
		}
		return esc(v.s)
	}
	return strconv.FormatInt(v.n, 10)
}

func (h *htmlPage) n(i int) int64 { return h.d.row[i].n }

// lim is a limit: "-" when none.
func (h *htmlPage) lim(i int) string {
	if !h.d.row[i].set || h.d.row[i].n == 0 {
		return "-"
	}
	return h.f(i)
}

func (h *htmlPage) td(s ...string) {
	for _, x := range s {
		h.w("<td>", x, "</td>")
	}
}

// humanTime is a duration as HAProxy's page shows it: 5s, 3m20s, 2h4m, 1d3h.
func humanTime(sec int64) string {
	if sec < 0 {
		return ""
	}
	switch {
	case sec < 60:
		return strconv.FormatInt(sec, 10) + "s"
	case sec < 3600:
		return strconv.FormatInt(sec/60, 10) + "m" + strconv.FormatInt(sec%60, 10) + "s"
	case sec < 86400:
		return strconv.FormatInt(sec/3600, 10) + "h" + strconv.FormatInt(sec%3600/60, 10) + "m"
	}
	return strconv.FormatInt(sec/86400, 10) + "d" + strconv.FormatInt(sec%86400/3600, 10) + "h"
}

// Row fields by show stat's positions.
const (
	fPxname, fSvname, fQcur, fQmax, fScur, fSmax, fSlim, fStot, fBin, fBout = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
	fDreq, fDresp, fEreq, fEcon, fEresp, fWretr, fWredis, fStatus           = 10, 11, 12, 13, 14, 15, 16, 17
	fWeight, fAct, fBck, fChkfail, fChkdown, fLastchg, fDowntime, fQlimit   = 18, 19, 20, 21, 22, 23, 24, 25
	fLbtot, fRate, fRateLim, fRateMax, fCheckStatus, fLastsess              = 30, 33, 34, 35, 36, 55
	fCheckRise, fCheckFall, fCheckHealth, fAddr, fCookie, fSid              = 67, 68, 69, 73, 74, 28
)

func (h *htmlPage) frontend() {
	name := h.f(fPxname)
	h.w("<tr class=\"frontend\">")
	if h.admin {
		h.w("<td></td>")
	}
	h.w("<td class=ac><a name=\"", name, "/Frontend\"></a><a class=lfsb href=\"#", name, "/Frontend\">Frontend</a></td><td colspan=3></td>")
	h.td(h.f(fRate), h.f(fRateMax), h.lim(fRateLim), h.f(fScur), h.f(fSmax), h.f(fSlim), h.f(fStot), "", "",
		h.f(fBin), h.f(fBout), h.f(fDreq), h.f(fDresp), h.f(fEreq), "", "", "", "")
	h.w("<td class=ac>", h.f(fStatus), "</td><td class=ac>&nbsp;</td><td class=ac>&nbsp;</td><td class=ac>&nbsp;</td><td class=ac>&nbsp;</td><td class=ac>&nbsp;</td><td class=ac>&nbsp;</td><td class=ac>&nbsp;</td><td class=ac>&nbsp;</td></tr>")
}

func (h *htmlPage) server(p *core.Proxy) {
	status := h.f(fStatus)
	style := "going_down"
	r := &h.d.row
	switch {
	case status == "DOWN" || status == "DOWN (agent)":
		style = "down"
	case strings.HasPrefix(status, "DOWN "):
		style = "going_up"
	case status == "DRAIN":
		style = "draining"
	case strings.HasPrefix(status, "NOLB "):
		style = "going_down"
	case status == "NOLB":
		style = "nolb"
	case status == "no check":
		style = "no_check"
	case !r[fChkfail].set || r[fCheckHealth].n == r[fCheckRise].n+r[fCheckFall].n-1:
		style = "up"
		if r[fWeight].n == 0 {
			style = "draining"
		}
	}
	if strings.HasPrefix(status, "MAINT") {
		h.w("<tr class=\"maintain\">")
	} else {
		kind := "active"
		if r[fBck].n != 0 {
			kind = "backup"
		}
		h.w("<tr class=\"", kind, "_", style, "\">")
	}
	px, sv := h.f(fPxname), h.f(fSvname)
	if h.admin {
		h.w("<td><input class='", px, "-checkbox' type=\"checkbox\" name=\"s\" value=\"", sv, "\"></td>")
	}
	h.w("<td class=ac><a name=\"", px, "/", sv, "\"></a>")
	if h.d.legends {
		h.w("<u>")
	}
	h.w("<a class=lfsb href=\"#", px, "/", sv, "\">", sv, "</a>")
	if h.d.legends {
		h.w("<div class=tips>")
		switch addr := h.f(fAddr); {
		case addr != "" && addr[0] >= '0' && addr[0] <= '9':
			h.w("IPv4: ", addr, ", ")
		case strings.HasPrefix(addr, "["):
			h.w("IPv6: ", addr, ", ")
		case addr != "":
			h.w(addr, ", ")
		}
		h.w("id: ", h.f(fSid))
		if r[fCookie].set {
			h.w(", cookie: '", h.f(fCookie), "'")
		}
		h.w("</div></u>")
	}
	h.w("</td>")
	h.td(h.f(fQcur), h.f(fQmax), h.lim(fQlimit), h.f(fRate), h.f(fRateMax), "", h.f(fScur), h.f(fSmax), h.lim(fSlim),
		h.f(fStot), h.f(fLbtot), humanTime(h.n(fLastsess)), h.f(fBin), h.f(fBout), "", h.f(fDresp), "",
		h.f(fEcon), h.f(fEresp), h.f(fWretr), h.f(fWredis))
	h.w("<td class=ac>")
	switch {
	case strings.HasPrefix(status, "MAINT"):
		h.w(humanTime(h.n(fLastchg)), " MAINT")
	case status == "no check":
		h.w("<i>no check</i>")
	default:
		h.w(humanTime(h.n(fLastchg)), " ", status)
		// Arrows: a down server on its way up, an up one on its way down.
		health, full := r[fCheckHealth].n, r[fCheckRise].n+r[fCheckFall].n-1
		if strings.HasPrefix(status, "DOWN") {
			if health != 0 {
				h.w(" &uarr;")
			}
		} else if health < full {
			h.w(" &darr;")
		}
	}
	h.w("</td>")
	h.w("<td class=ac>", h.f(fCheckStatus), "</td>")
	act, bck := "-", "-"
	if r[fAct].n != 0 {
		act = "Y"
	}
	if r[fBck].n != 0 {
		bck = "Y"
	}
	h.w("<td class=ac>", h.f(fWeight), "</td><td class=ac>", act, "</td><td class=ac>", bck, "</td>")
	if r[fChkfail].set {
		h.td(h.f(fChkfail), h.f(fChkdown), humanTime(h.n(fDowntime)))
	} else {
		h.w("<td colspan=3></td>")
	}
	h.w("<td class=ac>-</td></tr>\n")
}

func (h *htmlPage) backend() {
	name := h.f(fPxname)
	h.w("<tr class=\"backend\">")
	if h.admin {
		h.w("<td></td>")
	}
	h.w("<td class=ac><a name=\"", name, "/Backend\"></a><a class=lfsb href=\"#", name, "/Backend\">Backend</a></td>")
	h.td(h.f(fQcur), h.f(fQmax), "", h.f(fRate), h.f(fRateMax), "", h.f(fScur), h.f(fSmax), h.f(fSlim),
		h.f(fStot), h.f(fLbtot), humanTime(h.n(fLastsess)), h.f(fBin), h.f(fBout), h.f(fDreq), h.f(fDresp), "",
		h.f(fEcon), h.f(fEresp), h.f(fWretr), h.f(fWredis))
	h.w("<td class=ac>", humanTime(h.n(fLastchg)), " ", h.f(fStatus), "</td><td class=ac>&nbsp;</td>",
		"<td class=ac>", h.f(fWeight), "</td><td class=ac>", h.f(fAct), "</td><td class=ac>", h.f(fBck), "</td>",
		"<td class=ac>&nbsp;</td>")
	h.td(h.f(fChkdown), humanTime(h.n(fDowntime)), "")
	h.w("</tr>")
}
