package config

import "goha/core/diag"

// Line is one logical configuration line after tokenizing: quotes removed,
// escapes and environment variables resolved, conditional blocks applied.
// Words[0] is the keyword (which may be "no" or "default" before an option).
type Line struct {
	Pos   diag.Pos
	Words []string
	// Env looks up an environment variable as this line sees it: the
	// process environment with the setenv-family lines above it applied.
	// Addresses expand variables when they are parsed, so they need it.
	Env func(string) (string, bool)
}

// Section is one section of the configuration: its header line and the
// lines that follow it until the next header.
type Section struct {
	Kind  string   // "global", "defaults", "frontend", "backend", "listen", "ring", "peers", "resolvers", "userlist", "log-forward", ...
	Name  string   // empty for global and anonymous defaults
	From  string   // "from <defaults>" on the header, empty when absent
	Args  []string // header words after the name (and after "from x"), if any
	Pos   diag.Pos // position of the header line
	Lines []Line
}

// Options tune the preprocessor.
type Options struct {
	// Version is the version string compared by version_atleast() and
	// version_before(), e.g. "2.6.12". Empty means HAProxyVersion.
	Version string
	// Features are the names feature() knows, e.g. "OPENSSL", "LINUX_SPLICE".
	// A name may carry HAProxy's "+" (present) or "-" (absent) prefix; a
	// bare name is present.
	Features []string
	// Getenv looks up environment variables; nil means os.LookupEnv.
	Getenv func(string) (string, bool)
}
