// Package stick holds HAProxy's stick tables: keyed entries (an address,
// an integer, a string or binary key) that carry the data types a table
// stores — counters, general purpose tags and counters, rates over a
// period, the server an entry sticks to — with HAProxy's expiry, purge
// and rate semantics.
//
// The running process tracks entries for its streams (track-sc*), updates
// their counters as connections, sessions, requests and bytes go by, and
// the sample engine reads them (sc_*, src_*, table_*). The runtime
// commands (show table, set table, clear table) and the peers protocol
// read and write them through the same Table methods.
//
// # Locking
//
// Table.mu guards the table's index (the key map), each entry's reference
// count and the count of entries. Entry.mu guards the entry's data and its
// expiry date. A caller never holds an entry's lock while taking the
// table's: the table lock comes first where both are needed.
//
// # Time
//
// Dates are milliseconds on the process's monotonic clock (Now): rates
// rotate on it, and expiry dates are kept on it, as HAProxy's ticks are.
package stick
