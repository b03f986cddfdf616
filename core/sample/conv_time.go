package sample

import (
	"fmt"
	"strconv"
	"time"
)

// Dates: ltime and utime format a number of seconds since the epoch with a
// strftime format (C locale), in local time or UTC; http_date gives an
// HTTP date, optionally from milliseconds or microseconds.

func init() {
	RegisterConvs(
		Conv{Name: "ltime", Max: 2, In: TSint, Out: TStr, Check: typedArgs(1, []argKind{aStr, aInt}, nil), Fn: convTime(time.Local)},
		Conv{Name: "utime", Max: 2, In: TSint, Out: TStr, Check: typedArgs(1, []argKind{aStr, aInt}, nil), Fn: convTime(time.UTC)},
		Conv{Name: "http_date", Max: 2, In: TSint, Out: TStr, Check: typedArgs(0, []argKind{aInt, aStr}, dateUnitArgs), Fn: convHTTPDate},
	)
}

// epochMask keeps dates positive, as HAProxy's 55-bit mask.
const epochMask = 0x007fffffffffffff

func convTime(loc *time.Location) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		sec := s.I & epochMask
		if len(a) > 1 {
			sec += a[1].I
		}
		t := time.Unix(sec, 0).In(loc)
		s.setStr(strftime(r.alloc(32), arg(a, 0).S, t, loc == time.UTC))
		return true
	}
}

const (
	unitS = iota
	unitMS
	unitUS
)

func dateUnitArgs(env *Env, a []Arg) error {
	if len(a) < 2 {
		return nil
	}
	switch a[1].S {
	case "s":
		a[1].I = unitS
	case "ms":
		a[1].I = unitMS
	case "us":
		a[1].I = unitUS
	default:
		return fmt.Errorf("expects 's', 'ms' or 'us', got '%s'", a[1].S)
	}
	return nil
}

func convHTTPDate(r *Request, a []Arg, s *Sample) bool {
	v := s.I + arg(a, 0).I
	unit := arg(a, 1).I
	var frac int64
	switch unit {
	case unitMS:
		frac, v = v%1000, v/1000
	case unitUS:
		frac, v = v%1000000, v/1000000
	}
	t := time.Unix(v&epochMask, 0).UTC()
	out := t.AppendFormat(r.alloc(40), "Mon, 02 Jan 2006 15:04:05")
	if len(a) > 1 && unit != unitS {
		out = strconv.AppendInt(append(out, '.'), frac, 10)
	}
	s.setStr(append(out, " GMT"...))
	return true
}

var (
	wdays   = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	mnames  = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	appendN = func(b []byte, n int, width int, c byte) []byte {
		s := strconv.Itoa(n)
		for i := len(s); i < width; i++ {
			b = append(b, c)
		}
		return append(b, s...)
	}
)

// strftime formats t as C's strftime in the C locale. In UTC the zone is
// "GMT", as glibc names it.
func strftime(b []byte, f string, t time.Time, utc bool) []byte {
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 == len(f) {
			b = append(b, c)
			continue
		}
		i++
		switch f[i] {
		case 'a':
			b = append(b, wdays[t.Weekday()][:3]...)
		case 'A':
			b = append(b, wdays[t.Weekday()]...)
		case 'b', 'h':
			b = append(b, mnames[t.Month()-1][:3]...)
		case 'B':
			b = append(b, mnames[t.Month()-1]...)
		case 'c':
			b = strftime(b, "%a %b %e %H:%M:%S %Y", t, utc)
		case 'C':
			b = appendN(b, t.Year()/100, 2, '0')
		case 'd':
			b = appendN(b, t.Day(), 2, '0')
		case 'D', 'x':
			b = strftime(b, "%m/%d/%y", t, utc)
		case 'e':
			b = appendN(b, t.Day(), 2, ' ')
		case 'F':
			b = strftime(b, "%Y-%m-%d", t, utc)
		case 'G':
			y, _ := t.ISOWeek()
			b = strconv.AppendInt(b, int64(y), 10)
		case 'g':
			y, _ := t.ISOWeek()
			b = appendN(b, y%100, 2, '0')
		case 'H':
			b = appendN(b, t.Hour(), 2, '0')
		case 'I':
			b = appendN(b, (t.Hour()+11)%12+1, 2, '0')
		case 'j':
			b = appendN(b, t.YearDay(), 3, '0')
		case 'k':
			b = appendN(b, t.Hour(), 2, ' ')
		case 'l':
			b = appendN(b, (t.Hour()+11)%12+1, 2, ' ')
		case 'm':
			b = appendN(b, int(t.Month()), 2, '0')
		case 'M':
			b = appendN(b, t.Minute(), 2, '0')
		case 'n':
			b = append(b, '\n')
		case 'p':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'P':
			if t.Hour() < 12 {
				b = append(b, "am"...)
			} else {
				b = append(b, "pm"...)
			}
		case 'r':
			b = strftime(b, "%I:%M:%S %p", t, utc)
		case 'R':
			b = strftime(b, "%H:%M", t, utc)
		case 's':
			b = strconv.AppendInt(b, t.Unix(), 10)
		case 'S':
			b = appendN(b, t.Second(), 2, '0')
		case 't':
			b = append(b, '\t')
		case 'T', 'X':
			b = strftime(b, "%H:%M:%S", t, utc)
		case 'u':
			b = strconv.AppendInt(b, int64((int(t.Weekday())+6)%7+1), 10)
		case 'U':
			b = appendN(b, (t.YearDay()+6-int(t.Weekday()))/7, 2, '0')
		case 'V':
			_, w := t.ISOWeek()
			b = appendN(b, w, 2, '0')
		case 'w':
			b = strconv.AppendInt(b, int64(t.Weekday()), 10)
		case 'W':
			b = appendN(b, (t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2, '0')
		case 'y':
			b = appendN(b, t.Year()%100, 2, '0')
		case 'Y':
			b = strconv.AppendInt(b, int64(t.Year()), 10)
		case 'z':
			_, off := t.Zone()
			sign := byte('+')
			if off < 0 {
				sign, off = '-', -off
			}
			b = append(b, sign)
			b = appendN(b, off/3600*100+off%3600/60, 4, '0')
		case 'Z':
			if utc {
				b = append(b, "GMT"...)
			} else {
				name, _ := t.Zone()
				b = append(b, name...)
			}
		case '%':
			b = append(b, '%')
		default:
			b = append(b, '%', f[i])
		}
	}
	return b
}
