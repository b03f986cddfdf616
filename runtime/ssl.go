package runtime

import (
	"crypto/sha1"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"goha/core/certstore"
	"goha/core/tlsconf"
)

// The ssl commands: the certificates, crt-lists, CA and CRL files of the
// process's certificate store, changed by transactions that a commit
// makes visible to the next new connection. As in HAProxy 2.6 they need
// the admin level.
func init() {
	Register(
		&Command{Words: []string{"new", "ssl", "cert"}, Usage: "new ssl cert <certfile>", Help: "create a new certificate file to be used in a crt-list or a directory", Level: LevelAdmin, Run: cmdNewCert},
		&Command{Words: []string{"set", "ssl", "cert"}, Usage: "set ssl cert <certfile> <payload>", Help: "replace a certificate file", Level: LevelAdmin, Run: cmdSetCert},
		&Command{Words: []string{"commit", "ssl", "cert"}, Usage: "commit ssl cert <certfile>", Help: "commit a certificate file", Level: LevelAdmin, Run: cmdCommitCert},
		&Command{Words: []string{"abort", "ssl", "cert"}, Usage: "abort ssl cert <certfile>", Help: "abort a transaction for a certificate file", Level: LevelAdmin, Run: cmdAbortCert},
		&Command{Words: []string{"del", "ssl", "cert"}, Usage: "del ssl cert <certfile>", Help: "delete an unused certificate file", Level: LevelAdmin, Run: cmdDelCert},
		&Command{Words: []string{"show", "ssl", "cert"}, Usage: "show ssl cert [<certfile>]", Help: "display the SSL certificates used in memory, or the details of a file", Level: LevelAdmin, Run: cmdShowCert},
		&Command{Words: []string{"add", "ssl", "crt-list"}, Usage: "add ssl crt-list <list> <cert> [opts]*", Help: "add to crt-list file <list> a line <cert> or a payload", Level: LevelAdmin, Run: cmdAddCrtList},
		&Command{Words: []string{"del", "ssl", "crt-list"}, Usage: "del ssl crt-list <list> <cert[:line]>", Help: "delete a line <cert> from crt-list file <list>", Level: LevelAdmin, Run: cmdDelCrtList},
		&Command{Words: []string{"show", "ssl", "crt-list"}, Usage: "show ssl crt-list [-n] [<list>]", Help: "show the list of crt-lists or the content of a crt-list file <list>", Level: LevelAdmin, Run: cmdShowCrtList},
	)
	for _, k := range []fileKind{caKind, crlKind} {
		k := k
		Register(
			&Command{Words: []string{"new", "ssl", k.word}, Usage: k.newUsage, Help: "create a new " + k.title + " file to be used in a crt-list", Level: LevelAdmin, Run: func(c *Ctx) { cmdNewFile(c, k) }},
			&Command{Words: []string{"set", "ssl", k.word}, Usage: "set ssl " + k.word + " <" + k.arg + "> <payload>", Help: "replace a " + k.title + " file", Level: LevelAdmin, Run: func(c *Ctx) { cmdSetFile(c, k) }},
			&Command{Words: []string{"commit", "ssl", k.word}, Usage: "commit ssl " + k.word + " <" + k.arg + ">", Help: "commit a " + k.title + " file", Level: LevelAdmin, Run: func(c *Ctx) { cmdCommitFile(c, k) }},
			&Command{Words: []string{"abort", "ssl", k.word}, Usage: "abort ssl " + k.word + " <" + k.arg + ">", Help: "abort a transaction for a " + k.title + " file", Level: LevelAdmin, Run: func(c *Ctx) { cmdAbortFile(c, k) }},
			&Command{Words: []string{"del", "ssl", k.word}, Usage: "del ssl " + k.word + " <" + k.arg + ">", Help: "delete an unused " + k.title + " file", Level: LevelAdmin, Run: func(c *Ctx) { cmdDelFile(c, k) }},
			&Command{Words: []string{"show", "ssl", k.word}, Usage: k.showUsage, Help: k.showHelp, Level: LevelAdmin, Run: func(c *Ctx) { cmdShowFile(c, k) }},
		)
	}
}

func certStore(c *Ctx) *certstore.Store {
	if st := c.Proc.Conf.Global.Certs; st != nil {
		return st
	}
	return certstore.New()
}

func cmdNewCert(c *Ctx) {
	p := c.Arg(3)
	if p == "" {
		c.Err("'new ssl cert' expects a filename\n")
		return
	}
	if !certStore(c).NewCert(p) {
		c.Err(fmt.Sprintf("Certificate '%s' already exists!\n", p))
		return
	}
	c.Msg(fmt.Sprintf("New empty certificate store '%s'!\n", p))
}

func cmdSetCert(c *Ctx) {
	name := c.Arg(3)
	if name == "" || c.Payload == "" {
		c.Err("'set ssl cert expects a filename and a certificate as a payload\n")
		return
	}
	path, created, err := certStore(c).SetCert(name, []byte(c.Payload))
	if err != nil {
		// HAProxy names the file without the extension that said which
		// part the payload replaces.
		base, _ := certstore.SplitExt(name)
		var msg string
		switch {
		case errors.Is(err, certstore.ErrOtherTx):
			msg = fmt.Sprintf("The ongoing transaction is about '%s' but you are trying to set '%s'\n", path, base)
		case errors.Is(err, certstore.ErrUnknownPath):
			msg = "Can't replace a certificate which is not referenced by the configuration!\n"
		case errors.Is(err, certstore.ErrBadOCSP):
			// 2.6 puts no line break between the two messages.
			msg = "Error reading OCSP response in base64 formatCan't load the payload\n"
		case errors.Is(err, certstore.ErrNoKey):
			msg = fmt.Sprintf("unable to load private key from file '%s'.\nCan't load the payload\n", base)
		default:
			msg = fmt.Sprintf("unable to load certificate from file '%s'.\nCan't load the payload\n", base)
		}
		c.Err(msg + fmt.Sprintf("Can't update %s!\n", name))
		return
	}
	if created {
		c.Msg(fmt.Sprintf("Transaction created for certificate %s!\n", path))
	} else {
		c.Msg(fmt.Sprintf("Transaction updated for certificate %s!\n", path))
	}
}

func cmdCommitCert(c *Ctx) {
	p := c.Arg(3)
	if p == "" {
		c.Err("'commit ssl cert expects a filename\n")
		return
	}
	st := certStore(c)
	tx := st.CertTx()
	n, err := st.CommitCert(p)
	if err != nil {
		var msg string
		switch {
		case errors.Is(err, certstore.ErrNoTx):
			msg = "No ongoing transaction! !\n"
		case errors.Is(err, certstore.ErrOtherTx):
			msg = fmt.Sprintf("The ongoing transaction is about '%s' but you are trying to set '%s'\n", tx.Path, p)
		case errors.Is(err, certstore.ErrKeyMismatch):
			msg = fmt.Sprintf("inconsistencies between private key and certificate loaded '%s'.\n", p)
		default:
			msg = "The transaction must contain at least a certificate and a private key!\n"
		}
		c.Err(msg + fmt.Sprintf("Can't commit %s!\n", p))
		return
	}
	c.Msg(fmt.Sprintf("Committing %s%s\nSuccess!\n", p, strings.Repeat(".", n)))
}

func cmdAbortCert(c *Ctx) {
	p := c.Arg(3)
	if p == "" {
		c.Err("'abort ssl cert' expects a filename\n")
		return
	}
	st := certStore(c)
	tx := st.CertTx()
	switch err := st.AbortCert(p); {
	case errors.Is(err, certstore.ErrNoTx):
		c.Err("No ongoing transaction!\n")
	case errors.Is(err, certstore.ErrOtherTx):
		c.Err(fmt.Sprintf("The ongoing transaction is about '%s' but you are trying to abort a transaction for '%s'\n", tx.Path, p))
	default:
		c.Msg(fmt.Sprintf("Transaction aborted for certificate '%s'!\n", p))
	}
}

func cmdDelCert(c *Ctx) {
	p := c.Arg(3)
	if p == "" {
		c.Err("'del ssl cert' expects a certificate name\n")
		return
	}
	switch err := certStore(c).DelCert(p); {
	case errors.Is(err, certstore.ErrNotFound):
		c.Err(fmt.Sprintf("Can't remove the certificate: certificate '%s' doesn't exist!\n", p))
	case err != nil:
		c.Err(fmt.Sprintf("Can't remove the certificate: certificate '%s' in use, can't be deleted!\n", p))
	default:
		c.Msg(fmt.Sprintf("Certificate '%s' deleted!\n", p))
	}
}

func cmdShowCert(c *Ctx) {
	st := certStore(c)
	name := c.Arg(3)
	if name == "" {
		if tx := st.CertTx(); tx != nil {
			c.Printf("# transaction\n*%s\n", tx.Path)
		}
		c.WriteString("# filename\n")
		for _, p := range st.CertPaths() {
			c.WriteString(p + "\n")
		}
		return
	}
	// <path>.ocsp shows the OCSP response of <path>.
	name, ocsp := strings.CutSuffix(name, ".ocsp")
	var e *certstore.Cert
	inTx := false
	if p, ok := strings.CutPrefix(name, "*"); ok {
		if tx := st.CertTx(); tx != nil && tx.Path == p {
			e, inTx = tx, true
		}
	} else {
		e = st.Cert(name)
	}
	if e == nil {
		c.Err("Can't display the certificate: Not found or the certificate is a bundle!\n")
		return
	}
	if ocsp {
		showCertOCSP(c, st, e, inTx)
		return
	}
	var b strings.Builder
	b.WriteString("Filename: ")
	if inTx {
		b.WriteString("*")
	}
	b.WriteString(e.Path + "\n")
	b.WriteString("Status: ")
	switch {
	case e.Empty():
		b.WriteString("Empty\n")
	case inTx || !st.Used(e.Path):
		b.WriteString("Unused\n")
	default:
		b.WriteString("Used\n")
	}
	if !e.Empty() {
		writeCertDetails(&b, e.Certs[0], e.Certs[1:])
	}
	fmt.Fprintf(&b, "OCSP Response Key: %x\n", certstore.OCSPKey(e))
	c.WriteString(b.String())
}

// writeCertDetails writes a certificate's fields as `show ssl cert`
// and `show ssl ca-file` do.
func writeCertDetails(b *strings.Builder, x *x509.Certificate, chain []*x509.Certificate) {
	fmt.Fprintf(b, "Serial: %X\n", serialBytes(x))
	fmt.Fprintf(b, "notBefore: %s\n", asn1Time(x.NotBefore))
	fmt.Fprintf(b, "notAfter: %s\n", asn1Time(x.NotAfter))
	fmt.Fprintf(b, "Subject Alternative Name: %s\n", sanOneLine(x))
	fmt.Fprintf(b, "Algorithm: %s\n", keyAlgorithm(x))
	fmt.Fprintf(b, "SHA1 FingerPrint: %X\n", sha1.Sum(x.Raw))
	fmt.Fprintf(b, "Subject: %s\n", tlsconf.OneLine(x.RawSubject))
	fmt.Fprintf(b, "Issuer: %s\n", tlsconf.OneLine(x.RawIssuer))
	for _, ch := range chain {
		fmt.Fprintf(b, "Chain Subject: %s\n", tlsconf.OneLine(ch.RawSubject))
		fmt.Fprintf(b, "Chain Issuer: %s\n", tlsconf.OneLine(ch.RawIssuer))
	}
}

// sanOneLine writes the subject alternative names as HAProxy does: every
// name in order, separated by ", ", only DNS names with their value (an
// IP address or an e-mail leaves its place empty).
func sanOneLine(x *x509.Certificate) string {
	for _, e := range x.Extensions {
		if !e.Id.Equal(asn1.ObjectIdentifier{2, 5, 29, 17}) {
			continue
		}
		var seq asn1.RawValue
		if _, err := asn1.Unmarshal(e.Value, &seq); err != nil {
			return ""
		}
		var parts []string
		for rest := seq.Bytes; len(rest) > 0; {
			var n asn1.RawValue
			var err error
			if rest, err = asn1.Unmarshal(rest, &n); err != nil {
				break
			}
			if n.Class == asn1.ClassContextSpecific && n.Tag == 2 {
				parts = append(parts, "DNS:"+string(n.Bytes))
			} else {
				parts = append(parts, "")
			}
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

func serialBytes(x *x509.Certificate) []byte {
	if x.SerialNumber == nil {
		return nil
	}
	return x.SerialNumber.Bytes()
}

func keyAlgorithm(x *x509.Certificate) string {
	if n := tlsconf.KeyBits(x); n != "" {
		return n
	}
	return "Unknown"
}

// fileKind is what differs between the CA and CRL file commands.
type fileKind struct {
	kind                 certstore.Kind
	word, arg, title     string
	newUsage, showUsage  string
	showHelp, created    string
	short, notFoundShow  string
	idxNoun, countSuffix string
}

var (
	caKind = fileKind{kind: certstore.KindCA, word: "ca-file", arg: "cafile", title: "CA",
		newUsage: "new ssl ca-file <cafile>", showUsage: "show ssl ca-file [<cafile>[:<index>]]",
		showHelp: "display the SSL CA files used in memory, or the details of a <cafile>, or a single certificate of index <index> of a CA file <cafile>",
		created:  "New CA file created '%s'!\n", short: "CA", notFoundShow: "Can't display the CA file : Not found!\n", idxNoun: "CA"}
	crlKind = fileKind{kind: certstore.KindCRL, word: "crl-file", arg: "crlfile", title: "CRL",
		newUsage: "new ssl crlfile <crlfile>", showUsage: "show ssl crl-file [<crlfile[:<index>>]]",
		showHelp: "display the SSL CRL files used in memory, or the details of a <crlfile>, or a single CRL of index <index> of CRL file <crlfile>",
		created:  "New CRL file created '%s'!\n", short: "CRL", notFoundShow: "Can't display the CRL file : Not found!\n", idxNoun: "CRL"}
)

func cmdNewFile(c *Ctx, k fileKind) {
	p := c.Arg(3)
	if p == "" {
		c.Err(fmt.Sprintf("'new ssl %s' expects a filename\n", k.word))
		return
	}
	if !certStore(c).NewFile(k.kind, p) {
		c.Err(fmt.Sprintf("%s file '%s' already exists!\n", k.short, p))
		return
	}
	c.Msg(fmt.Sprintf(k.created, p))
}

func cmdSetFile(c *Ctx, k fileKind) {
	p := c.Arg(3)
	if p == "" || c.Payload == "" {
		what := "CAs"
		if k.kind == certstore.KindCRL {
			what = "CRLs"
		}
		c.Err(fmt.Sprintf("'set ssl %s expects a filename and %s as a payload\n", k.word, what))
		return
	}
	st := certStore(c)
	tx := st.FileTx(k.kind)
	created, err := st.SetFile(k.kind, p, []byte(c.Payload))
	if err != nil {
		var msg string
		switch {
		case errors.Is(err, certstore.ErrOtherTx):
			msg = fmt.Sprintf("The ongoing transaction is about '%s' but you are trying to set '%s'\n", tx.Path, p)
		case errors.Is(err, certstore.ErrUnknownPath):
			msg = fmt.Sprintf("Can't replace a %s file which is not referenced by the configuration!\n", k.short)
		default:
			msg = "Invalid payload\n"
		}
		c.Err(msg + fmt.Sprintf("Can't update %s!\n", p))
		return
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	c.Msg(fmt.Sprintf("transaction %s for %s %s!\n", verb, k.short, p))
}

func cmdCommitFile(c *Ctx, k fileKind) {
	p := c.Arg(3)
	if p == "" {
		c.Err("'commit ssl ca-file expects a filename\n")
		return
	}
	st := certStore(c)
	tx := st.FileTx(k.kind)
	n, err := st.CommitFile(k.kind, p)
	if err != nil {
		msg := "No ongoing transaction! !\n"
		if errors.Is(err, certstore.ErrOtherTx) {
			msg = fmt.Sprintf("The ongoing transaction is about '%s' but you are trying to set '%s'\n", tx.Path, p)
		}
		c.Err(msg + fmt.Sprintf("Can't commit %s!\n", p))
		return
	}
	c.Msg(fmt.Sprintf("Committing %s%s\nSuccess!\n", p, strings.Repeat(".", n)))
}

func cmdAbortFile(c *Ctx, k fileKind) {
	p := c.Arg(3)
	if p == "" {
		c.Err(fmt.Sprintf("'abort ssl %s' expects a filename\n", k.word))
		return
	}
	st := certStore(c)
	tx := st.FileTx(k.kind)
	switch err := st.AbortFile(k.kind, p); {
	case errors.Is(err, certstore.ErrNoTx):
		c.Err("No ongoing transaction!\n")
	case errors.Is(err, certstore.ErrOtherTx):
		c.Err(fmt.Sprintf("The ongoing transaction is about '%s' but you are trying to abort a transaction for '%s'\n", tx.Path, p))
	default:
		c.Msg(fmt.Sprintf("Transaction aborted for certificate '%s'!\n", p))
	}
}

func cmdDelFile(c *Ctx, k fileKind) {
	p := c.Arg(3)
	if p == "" {
		c.Err(fmt.Sprintf("'del ssl %s' expects a %s file name\n", k.word, k.short))
		return
	}
	switch err := certStore(c).DelFile(k.kind, p); {
	case errors.Is(err, certstore.ErrOtherKind):
		c.Err("Can't remove the CRL file: 'del ssl crl-file' does not work on CA files!\n")
	case errors.Is(err, certstore.ErrNotFound):
		c.Err(fmt.Sprintf("Can't remove the %s file: %s file '%s' doesn't exist!\n", k.short, k.short, p))
	case err != nil:
		c.Err(fmt.Sprintf("Can't remove the %s file: %s file '%s' in use, can't be deleted!\n", k.short, k.short, p))
	default:
		c.Msg(fmt.Sprintf("%s file '%s' deleted!\n", k.short, p))
	}
}

func fileCount(k fileKind, f *certstore.CAFile) string {
	if k.kind == certstore.KindCA {
		return fmt.Sprintf(" - %d certificate(s)", len(f.Certs))
	}
	return ""
}

func cmdShowFile(c *Ctx, k fileKind) {
	st := certStore(c)
	name := c.Arg(3)
	if name == "" {
		if tx := st.FileTx(k.kind); tx != nil {
			c.Printf("# transaction\n*%s%s\n", tx.Path, fileCount(k, tx))
		}
		c.WriteString("# filename\n")
		for _, p := range st.FilePaths(k.kind) {
			c.Printf("%s%s\n", p, fileCount(k, st.File(k.kind, p)))
		}
		return
	}
	idx := -1 // 0-based; the command counts from 1
	if i := strings.IndexByte(name, ':'); i >= 0 {
		n, err := strconv.Atoi(name[i+1:])
		if err != nil || n <= 0 {
			c.Err(fmt.Sprintf("wrong %s index after colons in '%s'!", k.idxNoun, name))
			return
		}
		idx, name = n-1, name[:i]
	}
	var f *certstore.CAFile
	inTx := false
	if p, ok := strings.CutPrefix(name, "*"); ok {
		if tx := st.FileTx(k.kind); tx != nil && tx.Path == p {
			f, inTx = tx, true
		}
	} else {
		f = st.File(k.kind, name)
	}
	if f == nil {
		c.Err(k.notFoundShow)
		return
	}
	if k.kind == certstore.KindCA && (len(f.Certs) == 0 || idx >= len(f.Certs)) {
		// HAProxy 2.6 writes a CA file's name and status along with
		// its first certificate shown: nothing when there is none.
		return
	}
	var b strings.Builder
	b.WriteString("Filename: ")
	if inTx {
		b.WriteString("*")
	}
	b.WriteString(f.Path + "\nStatus: ")
	n := len(f.Certs) + len(f.CRLs)
	switch {
	case n == 0:
		b.WriteString("Empty\n")
	case inTx || !st.Used(f.Path):
		b.WriteString("Unused\n")
	default:
		b.WriteString("Used\n")
	}
	if k.kind == certstore.KindCA {
		for i, x := range f.Certs {
			if idx >= 0 && i != idx {
				continue
			}
			fmt.Fprintf(&b, " \nCertificate #%d:\n", i+1)
			writeCertDetails(&b, x, nil)
		}
	} else {
		for i, l := range f.CRLs {
			if idx >= 0 && i != idx {
				continue
			}
			fmt.Fprintf(&b, " \nCertificate Revocation List #%d:\n", i+1)
			writeCRL(&b, l)
		}
	}
	c.WriteString(b.String())
}

func writeCRL(b *strings.Builder, l *x509.RevocationList) {
	v := 1
	if l.Number != nil || len(l.Extensions) > 0 {
		v = 2
	}
	fmt.Fprintf(b, "Version %d\n", v)
	fmt.Fprintf(b, "Signature Algorithm: %s\n", tlsconf.SigAlgLongName(l.SignatureAlgorithm))
	fmt.Fprintf(b, "Issuer: %s\n", tlsconf.OneLine(l.RawIssuer))
	fmt.Fprintf(b, "Last Update: %s\n", asn1Time(l.ThisUpdate))
	fmt.Fprintf(b, "Next Update: %s\n", asn1Time(l.NextUpdate))
	if len(l.RevokedCertificateEntries) == 0 {
		b.WriteString("No Revoked Certificates.\n")
		return
	}
	b.WriteString("Revoked Certificates:\n")
	for _, r := range l.RevokedCertificateEntries {
		fmt.Fprintf(b, "    Serial Number: %X\n", r.SerialNumber.Bytes())
		fmt.Fprintf(b, "        Revocation Date: %s\n", asn1Time(r.RevocationTime))
	}
}

func cmdShowCrtList(c *Ctx) {
	st := certStore(c)
	withLine := false
	name := c.Arg(3)
	if name == "-n" {
		withLine, name = true, c.Arg(4)
	}
	if name == "" {
		for _, p := range st.CrtListPaths() {
			c.WriteString(p + "\n")
		}
		return
	}
	name = strings.TrimRight(name, "/")
	l := st.CrtList(name)
	if l == nil {
		c.Err("didn't find the specified filename\n")
		return
	}
	c.Printf("# %s\n", l.Path)
	for _, e := range l.Entries {
		c.WriteString(e.Format(withLine) + "\n")
	}
}

func cmdAddCrtList(c *Ctx) {
	list := c.Arg(3)
	if list == "" || (c.Payload == "" && c.Arg(4) == "") {
		c.Err("'add ssl crtlist' expects a filename and a certificate name\n")
		return
	}
	list = strings.TrimRight(list, "/")
	st := certStore(c)
	fail := func(msg string) { c.Err("Can't edit the crt-list: " + msg + "\n") }
	if st.CrtList(list) == nil {
		fail(fmt.Sprintf("crt-list '%s' does not exist!", list))
		return
	}
	var e *certstore.CrtEntry
	if c.Payload != "" {
		if strings.Contains(c.Payload, "\n") {
			fail("only one line of payload is supported!")
			return
		}
		var err error
		if e, err = certstore.ParseCrtLine(c.Payload, "CLI", 1); err != nil {
			fail(err.Error())
			return
		}
		if e.Cert == "" {
			fail("'add ssl crtlist' should contain the certificate name in the payload")
			return
		}
	} else {
		e = &certstore.CrtEntry{Cert: c.Arg(4), Line: 1}
	}
	e.Cert = certstore.Abs(c.Proc.Conf.Global.CrtBase, e.Cert)
	for _, k := range []string{"ca-file", "ca-verify-file", "crl-file"} {
		if v, ok := e.Opts[k]; ok {
			e.Opts[k] = certstore.Abs(c.Proc.Conf.Global.CABase, v)
		}
	}
	n, err := st.AddCrtEntry(list, e)
	if err != nil {
		fail(err.Error())
		return
	}
	c.Msg(fmt.Sprintf("Inserting certificate '%s' in crt-list '%s'%s\nSuccess!\n", e.Cert, list, strings.Repeat(".", n)))
}

func cmdDelCrtList(c *Ctx) {
	list, cert := c.Arg(3), c.Arg(4)
	if list == "" || cert == "" {
		c.Err("'del ssl crtlist' expects a filename and a certificate name\n")
		return
	}
	line := 0
	if i := strings.LastIndexByte(cert, ':'); i >= 0 {
		n, err := strconv.Atoi(cert[i+1:])
		if err != nil || n < 0 {
			c.Err(fmt.Sprintf("Can't delete the entry: wrong line number after colons in '%s'!\n", cert))
			return
		}
		line, cert = n, cert[:i]
	}
	if err := certStore(c).DelCrtEntry(list, cert, line); err != nil {
		c.Err("Can't delete the entry: " + err.Error() + "\n")
		return
	}
	c.Msg(fmt.Sprintf("Entry '%s' deleted in crtlist '%s'!\n", cert, list))
}
