package check

// Status is a check status, numbered as HAProxy's HCHK_STATUS enum so that
// `show servers state` can print it as is.
type Status int

const (
	StatusUnknown  Status = iota // UNK
	StatusIni                    // INI: not checked yet
	StatusStart                  // a probe has started (never reported)
	StatusChecked                // CHECKED: no status change
	StatusHANA                   // HANA: observe detected consecutive errors
	StatusSockErr                // SOCKERR
	StatusL4OK                   // L4OK
	StatusL4TOut                 // L4TOUT
	StatusL4Con                  // L4CON
	StatusL6OK                   // L6OK
	StatusL6TOut                 // L6TOUT
	StatusL6Rsp                  // L6RSP
	StatusL7TOut                 // L7TOUT
	StatusL7Rsp                  // L7RSP
	StatusL57Data                // marker: statuses from here on carry a code
	StatusL7OK                   // L7OK
	StatusL7OKC                  // L7OKC
	StatusL7Sts                  // L7STS
	StatusProcErr                // PROCERR
	StatusProcTOut               // PROCTOUT
	StatusProcOK                 // PROCOK
	statusCount
)

// Result is what a status means for the rise/fall counter (HAProxy CHK_RES).
type Result int

const (
	ResultUnknown  Result = iota // no result yet
	ResultNeutral                // valid probe, no information
	ResultFailed                 // probe failed
	ResultPassed                 // probe succeeded
	ResultCondPass               // succeeded but the server asks for no new sessions
)

var statusTable = [statusCount]struct {
	res  Result
	code string
	desc string
}{
	StatusUnknown:  {ResultUnknown, "UNK", "Unknown"},
	StatusIni:      {ResultUnknown, "INI", "Initializing"},
	StatusChecked:  {ResultNeutral, "CHECKED", "No status change"},
	StatusHANA:     {ResultFailed, "HANA", "Health analyze"},
	StatusSockErr:  {ResultFailed, "SOCKERR", "Socket error"},
	StatusL4OK:     {ResultPassed, "L4OK", "Layer4 check passed"},
	StatusL4TOut:   {ResultFailed, "L4TOUT", "Layer4 timeout"},
	StatusL4Con:    {ResultFailed, "L4CON", "Layer4 connection problem"},
	StatusL6OK:     {ResultPassed, "L6OK", "Layer6 check passed"},
	StatusL6TOut:   {ResultFailed, "L6TOUT", "Layer6 timeout"},
	StatusL6Rsp:    {ResultFailed, "L6RSP", "Layer6 invalid response"},
	StatusL7TOut:   {ResultFailed, "L7TOUT", "Layer7 timeout"},
	StatusL7Rsp:    {ResultFailed, "L7RSP", "Layer7 invalid response"},
	StatusL7OK:     {ResultPassed, "L7OK", "Layer7 check passed"},
	StatusL7OKC:    {ResultCondPass, "L7OKC", "Layer7 check conditionally passed"},
	StatusL7Sts:    {ResultFailed, "L7STS", "Layer7 wrong status"},
	StatusProcErr:  {ResultFailed, "PROCERR", "External check error"},
	StatusProcTOut: {ResultFailed, "PROCTOUT", "External check timeout"},
	StatusProcOK:   {ResultPassed, "PROCOK", "External check passed"},
}

func (s Status) valid() bool { return s >= 0 && s < statusCount && statusTable[s].code != "" }

// String returns the short code shown in the check_status column ("L4OK").
func (s Status) String() string {
	if !s.valid() {
		return statusTable[StatusUnknown].code
	}
	return statusTable[s].code
}

// Desc returns the long text used in logs and check_desc ("Layer4 check passed").
func (s Status) Desc() string {
	if !s.valid() {
		return statusTable[StatusUnknown].desc
	}
	return statusTable[s].desc
}

// Result maps a status to its effect on the rise/fall counter.
func (s Status) Result() Result {
	if !s.valid() {
		return ResultUnknown
	}
	return statusTable[s].res
}

// HasCode reports whether the status carries a check code (HTTP status,
// SMTP code, ...), which logs print as ", code: N".
func (s Status) HasCode() bool { return s >= StatusL57Data }

// StatName returns the check_status column text of `show stat`: the short
// code, prefixed by "* " while a probe is in progress.
func StatName(s Status, inProgress bool) string {
	if inProgress {
		return "* " + s.String()
	}
	return s.String()
}
