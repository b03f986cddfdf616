package ring

// sysSendmmsg is sendmmsg's system call number (the syscall package does
// not name it).
const sysSendmmsg = 269
