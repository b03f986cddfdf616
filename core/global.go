package core

import (
	"time"

	"goha/core/diag"
)

// StatsSocket is one `stats socket` line of the global section.
type StatsSocket struct {
	Pos  diag.Pos
	Addr string   // path, ipv4@a:p, ipv6@[a]:p, fd@n, unix@path
	Args []string // bind parameters: level, mode, uid, gid, user, group, expose-fd, severity-output, maxconn
}

// Global is the merged content of every `global` section.
type Global struct {
	NbThread                     int
	MaxConn                      int
	PidFile                      string
	Daemon                       bool
	MasterWorker                 bool
	StatsSockets                 []StatsSocket
	StatsTimeout                 time.Duration
	StatsMaxConn                 int
	Logs                         []LineDef
	LogTag                       string
	Hostname                     string
	SpreadChecks                 int
	BufSize                      int
	MaxRewrite                   int
	ServerStateFile              string
	ServerStateBase              string
	LoadStateFrom                string // global|local|none, set in defaults/backends too
	SSLDefaultServerOptions      []string
	SSLDefaultServerCiphers      string
	SSLDefaultServerCiphersuites string
	SSLDefaultBindOptions        []string
	SSLDefaultBindCiphers        string
	Description                  string
	Node                         string
	UnixBind                     []string
	CPUMap                       []string
	HardStopAfter                time.Duration
	GraceTime                    time.Duration
	Quiet                        bool
	ZeroWarning                  bool
	// Idle server connection pools: tune.idle-pool.shared off, and the
	// tune.pool-low-fd-ratio / tune.pool-high-fd-ratio percentages of the
	// descriptor limit (HAProxy's defaults: 20 and 25).
	IdlePoolNoShare bool
	PoolLowFDRatio  int
	PoolHighFDRatio int
}

func defaultGlobal() Global {
	return Global{
		StatsTimeout:    10 * time.Second,
		StatsMaxConn:    10,
		BufSize:         16384,
		MaxRewrite:      1024,
		PoolLowFDRatio:  20,
		PoolHighFDRatio: 25,
	}
}
