package stick

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

// KeyType is what a table is keyed by.
type KeyType uint8

const (
	KeyIP      KeyType = iota // IPv4 address, 4 bytes
	KeyIPv6                   // IPv6 address, 16 bytes
	KeyInteger                // 32-bit integer
	KeyString                 // string of up to KeyLen bytes
	KeyBinary                 // binary block of KeyLen bytes, zero-padded
)

var keyTypeNames = [...]string{KeyIP: "ip", KeyIPv6: "ipv6", KeyInteger: "integer", KeyString: "string", KeyBinary: "binary"}

func (k KeyType) String() string { return keyTypeNames[k] }

// ParseKeyType reads a table's type keyword; custom says whether the type
// takes a `len`, and size is its key size when none is given.
func ParseKeyType(s string) (k KeyType, custom bool, size int, ok bool) {
	switch s {
	case "ip":
		return KeyIP, false, 4, true
	case "ipv6":
		return KeyIPv6, false, 16, true
	case "integer":
		return KeyInteger, false, 4, true
	case "string":
		return KeyString, true, 32, true
	case "binary":
		return KeyBinary, true, 32, true
	}
	return 0, false, 0, false
}

// DataType is one kind of data a table stores, numbered as HAProxy 2.6
// numbers them: entries list their data in this order, and the peers
// protocol sends these numbers.
type DataType uint8

const (
	ServerID DataType = iota
	GPT0
	GPC0
	GPC0Rate
	ConnCnt
	ConnRate
	ConnCur
	SessCnt
	SessRate
	HTTPReqCnt
	HTTPReqRate
	HTTPErrCnt
	HTTPErrRate
	BytesInCnt
	BytesInRate
	BytesOutCnt
	BytesOutRate
	GPC1
	GPC1Rate
	ServerKey
	HTTPFailCnt
	HTTPFailRate
	GPT
	GPC
	GPCRate
	NumTypes
)

// StdType is how a data type's value is kept.
type StdType uint8

const (
	StdSint StdType = iota // signed 32-bit
	StdUint                // unsigned 32-bit
	StdUll                 // unsigned 64-bit
	StdFreq                // a rate over a period
	StdDict                // a string (server_key)
)

// TypeInfo describes a data type.
type TypeInfo struct {
	Name   string
	Std    StdType
	Period bool // takes a period: conn_rate(10s)
	Array  bool // an array: gpc(3)
	Local  bool // not shared with peers (conn_cur)
}

// Types is HAProxy 2.6's table of data types.
var Types = [NumTypes]TypeInfo{
	ServerID:     {Name: "server_id", Std: StdSint},
	GPT0:         {Name: "gpt0", Std: StdUint},
	GPC0:         {Name: "gpc0", Std: StdUint},
	GPC0Rate:     {Name: "gpc0_rate", Std: StdFreq, Period: true},
	ConnCnt:      {Name: "conn_cnt", Std: StdUint},
	ConnRate:     {Name: "conn_rate", Std: StdFreq, Period: true},
	ConnCur:      {Name: "conn_cur", Std: StdUint, Local: true},
	SessCnt:      {Name: "sess_cnt", Std: StdUint},
	SessRate:     {Name: "sess_rate", Std: StdFreq, Period: true},
	HTTPReqCnt:   {Name: "http_req_cnt", Std: StdUint},
	HTTPReqRate:  {Name: "http_req_rate", Std: StdFreq, Period: true},
	HTTPErrCnt:   {Name: "http_err_cnt", Std: StdUint},
	HTTPErrRate:  {Name: "http_err_rate", Std: StdFreq, Period: true},
	BytesInCnt:   {Name: "bytes_in_cnt", Std: StdUll},
	BytesInRate:  {Name: "bytes_in_rate", Std: StdFreq, Period: true},
	BytesOutCnt:  {Name: "bytes_out_cnt", Std: StdUll},
	BytesOutRate: {Name: "bytes_out_rate", Std: StdFreq, Period: true},
	GPC1:         {Name: "gpc1", Std: StdUint},
	GPC1Rate:     {Name: "gpc1_rate", Std: StdFreq, Period: true},
	ServerKey:    {Name: "server_key", Std: StdDict},
	HTTPFailCnt:  {Name: "http_fail_cnt", Std: StdUint},
	HTTPFailRate: {Name: "http_fail_rate", Std: StdFreq, Period: true},
	GPT:          {Name: "gpt", Std: StdUint, Array: true},
	GPC:          {Name: "gpc", Std: StdUint, Array: true},
	GPCRate:      {Name: "gpc_rate", Std: StdFreq, Array: true, Period: true},
}

// LookupType finds a data type by its name.
func LookupType(name string) (DataType, bool) {
	for i := range Types {
		if Types[i].Name == name {
			return DataType(i), true
		}
	}
	return 0, false
}

// MaxArray is the largest array a table may store (gpc(N), gpt(N)), as
// in HAProxy 2.6.
const MaxArray = 100

// Stored is one data type a table stores.
type Stored struct {
	Type   DataType
	N      int   // array size (gpt, gpc, gpc_rate); 1 otherwise
	Period int64 // the rate's period in milliseconds
}

// KeyFromAddr appends the key of an ip or ipv6 table for an address: an
// IPv4 address maps into IPv6 and an IPv4-mapped IPv6 address into IPv4,
// as HAProxy casts them; another address does not fit an ip table.
func KeyFromAddr(dst []byte, kt KeyType, a netip.Addr) ([]byte, bool) {
	switch kt {
	case KeyIP:
		a = a.Unmap()
		if !a.Is4() {
			return dst, false
		}
		b := a.As4()
		return append(dst, b[:]...), true
	case KeyIPv6:
		b := a.As16()
		return append(dst, b[:]...), true
	}
	return dst, false
}

// KeyFromInt appends an integer table's key.
func KeyFromInt(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

// KeyFromBytes appends a string or binary table's key: a string is cut
// to keyLen-1 bytes, binary to keyLen bytes and padded with zeros.
func KeyFromBytes(dst []byte, kt KeyType, keyLen int, v []byte) []byte {
	if kt == KeyString {
		if len(v) > keyLen-1 {
			v = v[:keyLen-1]
		}
		return append(dst, v...)
	}
	if len(v) > keyLen {
		v = v[:keyLen]
	}
	dst = append(dst, v...)
	for i := len(v); i < keyLen; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// appendKey writes a key as show table does.
func appendKey(b []byte, kt KeyType, key string) []byte {
	switch kt {
	case KeyIP:
		if len(key) == 4 {
			return netip.AddrFrom4([4]byte([]byte(key))).AppendTo(b)
		}
	case KeyIPv6:
		if len(key) == 16 {
			a := netip.AddrFrom16([16]byte([]byte(key)))
			return a.AppendTo(b)
		}
	case KeyInteger:
		if len(key) == 4 {
			return strconv.AppendUint(b, uint64(binary.BigEndian.Uint32([]byte(key))), 10)
		}
	case KeyString:
		return appendText(b, key)
	}
	return appendBinary(b, key)
}

// appendText writes a string key as HAProxy's dump_text does: printable
// bytes as they are, the separators of show table's output and control
// bytes escaped, up to the first NUL.
func appendText(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 0:
			return b
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == 0x1b:
			b = append(b, '\\', 'e')
		case c == '\\' || c == ' ' || c == '=':
			b = append(b, '\\', c)
		case c < 0x20 || c >= 0x7f:
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendBinary writes a binary key as HAProxy's dump_binary does: hex.
func appendBinary(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, hexDigits[s[i]>>4], hexDigits[s[i]&15])
	}
	return b
}

const hexDigits = "0123456789ABCDEF"
