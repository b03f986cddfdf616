package stream

// startLogging starts the rings' forwarders and log-forward listeners for
// as long as the process runs.
func startLogging(proc *Process) error {
	proc.OnStop(proc.Conf.StartLogging())
	return nil
}
