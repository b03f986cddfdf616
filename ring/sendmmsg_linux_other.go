//go:build linux && !amd64 && !arm64

package ring

// sysSendmmsg is unknown here: UDP targets send each line alone.
const sysSendmmsg = 0
