package cli

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// EnvSocket names the environment variable consulted when neither -S nor a
// configuration file gives the socket.
const EnvSocket = "GOHA_SOCKET"

// SplitAddr turns a socket address as an operator writes it into a network
// and an address for net.Dial. It accepts HAProxy's prefixes (unix@, abns@,
// ipv4@, ipv6@, tcp@), a plain path, and host:port. A name with a slash, or
// without a numeric port, is a UNIX socket path.
func SplitAddr(s string) (network, address string, err error) {
	if s == "" {
		return "", "", fmt.Errorf("cli: empty socket address")
	}
	if i := strings.Index(s, "@"); i > 0 {
		prefix, rest := s[:i], s[i+1:]
		switch prefix {
		case "unix":
			return "unix", rest, nil
		case "abns":
			return "unix", "@" + rest, nil
		case "ipv4":
			return "tcp4", rest, nil
		case "ipv6":
			return "tcp6", rest, nil
		case "tcp", "tcp4", "tcp6":
			return prefix, rest, nil
		case "fd", "sockpair":
			return "", "", fmt.Errorf("cli: cannot connect to %q: %s@ sockets are inherited, not reachable by address", s, prefix)
		}
	}
	if strings.Contains(s, "/") {
		return "unix", s, nil
	}
	if host, port, err := net.SplitHostPort(s); err == nil {
		if _, perr := strconv.ParseUint(port, 10, 16); perr == nil {
			if host == "" {
				host = "127.0.0.1"
			}
			return "tcp", net.JoinHostPort(host, port), nil
		}
	}
	return "unix", s, nil
}

// sectionKeywords start a configuration section; everything else continues
// the current one.
var sectionKeywords = map[string]bool{
	"global": true, "defaults": true, "frontend": true, "backend": true,
	"listen": true, "peers": true, "resolvers": true, "userlist": true,
	"ring": true, "program": true, "http-errors": true, "cache": true,
	"mailers": true, "log-forward": true, "fcgi-app": true, "crt-store": true,
	"traces": true, "acme": true,
}

// SocketFromConfig returns the address of the first usable "stats socket" of
// the global sections of an HAProxy-style configuration file. It is a small
// scan, not a parser: comments, quotes, backslash escapes and ${VAR} are
// handled; conditional blocks are not evaluated.
func SocketFromConfig(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cli: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	inGlobal := false
	lineNo := 0
	for sc.Scan() {
		lineNo++
		words := configWords(sc.Text())
		if len(words) == 0 {
			continue
		}
		if sectionKeywords[words[0]] {
			inGlobal = words[0] == "global"
			continue
		}
		if !inGlobal || len(words) < 3 || words[0] != "stats" || words[1] != "socket" {
			continue
		}
		if strings.HasPrefix(words[2], "fd@") || strings.HasPrefix(words[2], "sockpair@") {
			continue
		}
		return words[2], nil
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("cli: %s:%d: %w", path, lineNo, err)
	}
	return "", fmt.Errorf("%w: no usable \"stats socket\" in the global section of %s", ErrNoSocket, path)
}

// configWords splits a configuration line the way HAProxy does for the
// purpose of finding a socket: blanks separate words, '#' starts a comment,
// quotes group, a backslash escapes, and ${VAR} (or ${VAR-default}) expands
// outside single quotes.
func configWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == 0 && (c == ' ' || c == '\t' || c == '\r'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case quote == 0 && c == '#':
			i = len(line)
		case c == '\\' && quote != '\'' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case (c == '"' || c == '\'') && quote == 0:
			quote = c
			inWord = true
		case c == quote:
			quote = 0
		case c == '$' && quote != '\'' && i+1 < len(line) && line[i+1] == '{':
			end := strings.IndexByte(line[i:], '}')
			if end < 0 {
				cur.WriteByte(c)
				inWord = true
				continue
			}
			name := line[i+2 : i+end]
			def, hasDef := "", false
			if j := strings.IndexByte(name, '-'); j >= 0 {
				name, def, hasDef = name[:j], name[j+1:], true
			}
			v, ok := os.LookupEnv(name)
			if !ok && hasDef {
				v = def
			}
			cur.WriteString(v)
			inWord = true
			i += end
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
