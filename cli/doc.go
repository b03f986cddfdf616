// Package cli is the admin shell behind gohactl: a client of the stats
// socket (the runtime API) of goha or HAProxy. It speaks only the socket
// protocol and imports nothing of goha's core.
//
// # Protocol
//
// A Conn switches its session to prompt mode ("prompt") and to numeric
// severities ("set severity-output number") once, then sends one command per
// line. Every reply ends with an empty line and the prompt "> ":
//
//	-> get weight be/s1\n
//	<- 1 (initial 1)\n\n>
//	-> get weight be/nosuch\n
//	<- [3]: No such server.\n\n>
//
// The severity prefix tells errors (levels 0..3) from messages; data dumps
// carry none. A payload follows a command ending in "<<" and ends at an empty
// line. The server answers each payload line with a "+ " prompt, which the
// reply parser removes.
//
// # Words
//
// The socket splits words at blanks and commands at ';', with a backslash
// escaping the next character, and knows nothing of quotes. Operators type
// shell-like lines instead (ParseLine, using shlex), which EncodeWords turns
// into the socket's escaping. Pipe stages after '|' (ApplyStages) run locally
// on tabular replies (ParseTable).
//
// # Sessions
//
// A Session owns the connection across commands, reconnects when the
// server has closed it (restart, idle timeout), feeds completion from the
// server's help and names, and runs watch. RunArgs, RunScript and RunShell
// are gohactl's three modes.
package cli
