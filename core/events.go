package core

import (
	"io"
	"os"
)

// Version is goha's version, in the place where HAProxy prints its own.
var (
	Version     = "2.6.12-goha"
	ReleaseDate = "2026/11/29"
)

// eventOut receives server state changes and other events HAProxy prints
// on its standard error; set by the daemon.
var eventOut io.Writer

// SetEventOutput sets where server state changes are printed.
func SetEventOutput(w io.Writer) { eventOut = w }

func pidNow() int { return os.Getpid() }
