package sample

import (
	"fmt"
	"strconv"
)

// MQTT converters, read as HAProxy 2.6 reads a packet: only CONNECT and
// CONNACK (the first packet each side sends) are parsed, in MQTT 3.1,
// 3.1.1 and 5.0. A packet cut short gives no sample and may still change;
// one that is wrong is final.

func init() {
	RegisterConvs(
		Conv{Name: "mqtt_is_valid", In: TBin, Out: TBool, Fn: convMQTTIsValid},
		Conv{Name: "mqtt_field_value", Max: 2, In: TBin, Out: TStr, Check: typedArgs(2, []argKind{aStr, aStr}, mqttFieldArgs), Fn: convMQTTFieldValue},
	)
}

// Packet types.
const (
	mqttConnect = 1
	mqttConnack = 2
	mqttTypes   = 16 // one past AUTH (15)
)

var mqttTypeNames = [mqttTypes]string{"", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
	"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}

// mqttTypeFlags are the fixed header's flags each type must have.
var mqttTypeFlags = [mqttTypes]byte{3: 0x0f, 6: 0x02, 8: 0x02, 10: 0x02}

// Field names, in HAProxy's order (the converter's argument names them,
// the properties by their number).
const (
	mfFlags = iota + 1
	mfReasonCode
	mfProtocolName
	mfProtocolVersion
	mfClientIdentifier
	mfWillTopic
	mfWillPayload
	mfUsername
	mfPassword
	mfKeepalive
	mfPayloadFormatIndicator
	mfMessageExpiryInterval
	mfContentType
	mfResponseTopic
	mfCorrelationData
	mfSubscriptionIdentifier
	mfSessionExpiryInterval
	mfAssignedClientIdentifier
	mfServerKeepalive
	mfAuthenticationMethod
	mfAuthenticationData
	mfRequestProblemInformation
	mfDelayInterval
	mfRequestResponseInformation
	mfResponseInformation
	mfServerReference
	mfReasonString
	mfReceiveMaximum
	mfTopicAliasMaximum
	mfTopicAlias
	mfMaximumQoS
	mfRetainAvailable
	mfUserProperty
	mfMaximumPacketSize
	mfWildcardSubscriptionAvailable
	mfSubscriptionIdentifiersAvailable
	mfSharedSubscriptionAvailable
	mfCount
)

var mqttFieldNames = [mfCount]string{"", "flags", "reason_code", "protocol_name", "protocol_version", "client_identifier",
	"will_topic", "will_payload", "username", "password", "keepalive",
	"1", "2", "3", "8", "9", "11", "17", "18", "19", "21", "22", "23", "24", "25", "26", "28", "31", "33", "34", "35",
	"36", "37", "38", "39", "40", "41", "42"}

func mqttBits(fields ...int) uint64 {
	var m uint64
	for _, f := range fields {
		m |= 1 << f
	}
	return m
}

// mqttFields are the fields the converter accepts for each packet type.
var mqttFields = [mqttTypes]uint64{
	mqttConnect: mqttBits(mfProtocolName, mfProtocolVersion, mfFlags, mfKeepalive, mfSessionExpiryInterval,
		mfReceiveMaximum, mfMaximumPacketSize, mfTopicAliasMaximum, mfRequestResponseInformation,
		mfRequestProblemInformation, mfUserProperty, mfAuthenticationMethod, mfAuthenticationData,
		mfClientIdentifier, mfDelayInterval, mfPayloadFormatIndicator, mfMessageExpiryInterval, mfContentType,
		mfResponseTopic, mfCorrelationData, mfWillTopic, mfWillPayload, mfUsername, mfPassword),
	mqttConnack: mqttBits(mfFlags, mfProtocolVersion, mfReasonCode, mfSessionExpiryInterval, mfReceiveMaximum,
		mfMaximumQoS, mfRetainAvailable, mfMaximumPacketSize, mfAssignedClientIdentifier, mfTopicAliasMaximum,
		mfReasonString, mfWildcardSubscriptionAvailable, mfSubscriptionIdentifiersAvailable,
		mfSharedSubscriptionAvailable, mfServerKeepalive, mfResponseInformation, mfServerReference,
		mfUserProperty, mfAuthenticationMethod, mfAuthenticationData),
	3:  mqttBits(mfPayloadFormatIndicator, mfMessageExpiryInterval, mfContentType, mfResponseTopic, mfCorrelationData, mfSubscriptionIdentifier, mfTopicAlias, mfUserProperty),
	4:  mqttBits(mfReasonCode, mfReasonString, mfUserProperty),
	5:  mqttBits(mfReasonCode, mfReasonString, mfUserProperty),
	6:  mqttBits(mfReasonCode, mfReasonString, mfUserProperty),
	7:  mqttBits(mfReasonCode, mfReasonString, mfUserProperty),
	8:  mqttBits(mfSubscriptionIdentifier, mfUserProperty),
	9:  mqttBits(mfReasonString, mfUserProperty),
	10: mqttBits(mfUserProperty),
	11: mqttBits(mfReasonString, mfUserProperty),
	14: mqttBits(mfReasonCode, mfSessionExpiryInterval, mfServerReference, mfReasonString, mfUserProperty),
	15: mqttBits(mfAuthenticationMethod, mfAuthenticationData, mfReasonString, mfUserProperty),
}

// mqttProps maps a property's identifier to its field and its encoding:
// 1, 2 or 4 bytes, 's' a string, 'u' a user property (two strings).
var mqttProps = [256]struct {
	field int
	kind  byte
}{
	0x01: {mfPayloadFormatIndicator, 1}, 0x02: {mfMessageExpiryInterval, 4}, 0x03: {mfContentType, 's'},
	0x08: {mfResponseTopic, 's'}, 0x09: {mfCorrelationData, 's'}, 0x11: {mfSessionExpiryInterval, 4},
	0x12: {mfAssignedClientIdentifier, 's'}, 0x13: {mfServerKeepalive, 2}, 0x15: {mfAuthenticationMethod, 's'},
	0x16: {mfAuthenticationData, 's'}, 0x17: {mfRequestProblemInformation, 1}, 0x18: {mfDelayInterval, 4},
	0x19: {mfRequestResponseInformation, 1}, 0x1a: {mfResponseInformation, 's'}, 0x1c: {mfServerReference, 's'},
	0x1f: {mfReasonString, 's'}, 0x21: {mfReceiveMaximum, 2}, 0x22: {mfTopicAliasMaximum, 2},
	0x24: {mfMaximumQoS, 1}, 0x25: {mfRetainAvailable, 1}, 0x26: {mfUserProperty, 'u'},
	0x27: {mfMaximumPacketSize, 4}, 0x28: {mfWildcardSubscriptionAvailable, 1},
	0x29: {mfSubscriptionIdentifiersAvailable, 1}, 0x2a: {mfSharedSubscriptionAvailable, 1},
}

// Properties each packet part accepts.
var (
	mqttConnectProps = mqttBits(mfSessionExpiryInterval, mfReceiveMaximum, mfMaximumPacketSize, mfTopicAliasMaximum,
		mfRequestResponseInformation, mfRequestProblemInformation, mfUserProperty, mfAuthenticationMethod, mfAuthenticationData)
	mqttWillProps = mqttBits(mfDelayInterval, mfPayloadFormatIndicator, mfMessageExpiryInterval, mfContentType,
		mfResponseTopic, mfCorrelationData, mfUserProperty)
	mqttConnackProps = mqttBits(mfSessionExpiryInterval, mfReceiveMaximum, mfMaximumQoS, mfRetainAvailable,
		mfMaximumPacketSize, mfAssignedClientIdentifier, mfTopicAliasMaximum, mfReasonString,
		mfWildcardSubscriptionAvailable, mfSubscriptionIdentifiersAvailable, mfSharedSubscriptionAvailable,
		mfServerKeepalive, mfResponseInformation, mfServerReference, mfUserProperty, mfAuthenticationMethod,
		mfAuthenticationData)
	// Properties that must be 0 or 1, and those that cannot be 0.
	mqttBoolProps = mqttBits(mfRequestResponseInformation, mfRequestProblemInformation, mfPayloadFormatIndicator,
		mfMaximumQoS, mfRetainAvailable, mfWildcardSubscriptionAvailable, mfSubscriptionIdentifiersAvailable,
		mfSharedSubscriptionAvailable)
	mqttNonZeroProps = mqttBits(mfReceiveMaximum, mfMaximumPacketSize, mfAssignedClientIdentifier)
)

// mqttPacket is what the parser keeps of a packet: the fields as bytes
// or numbers, by field.
type mqttPacket struct {
	typ, version, flags byte
	length              uint32
	str                 [mfCount][]byte
	num                 [mfCount]uint32
}

const (
	mqttInvalid = -1
	mqttMore    = 0
	mqttValid   = 1
)

// mqttVarint reads a variable byte integer of at most 4 bytes; ok false
// past 4. As in HAProxy, input that ends inside it is not an error: it
// gives what was read.
func mqttVarint(b []byte) (v uint32, n int, ok bool) {
	shift := 0
	for n < 4 && n < len(b) {
		c := b[n]
		v += uint32(c&127) << shift
		shift += 7
		n++
		if c <= 127 {
			return v, n, true
		}
	}
	return v, n, n < 4
}

// mqttString reads a string with its 2-byte length; n 0 when it does not
// fit.
func mqttString(b []byte) (s []byte, n int) {
	if len(b) < 2 {
		return nil, 0
	}
	l := int(b[0])<<8 | int(b[1])
	if len(b)-2 < l {
		return nil, 0
	}
	return b[2 : 2+l], 2 + l
}

func mqttValidate(msg []byte, p *mqttPacket) int {
	*p = mqttPacket{}
	if len(msg) < 2 {
		return mqttMore
	}
	p.typ = msg[0] >> 4
	if p.typ == 0 || msg[0]&0x0f != mqttTypeFlags[p.typ] {
		return mqttInvalid
	}
	l, n, ok := mqttVarint(msg[1:])
	if !ok {
		return mqttInvalid
	}
	p.length = l
	rest := msg[1+n:]
	if uint32(len(rest)) < l {
		return mqttMore
	}
	switch p.typ {
	case mqttConnect:
		return mqttConnectPacket(rest, p)
	case mqttConnack:
		return mqttConnackPacket(rest, p)
	}
	return mqttInvalid
}

// mqttProperties reads a property list (its length first) into p, for a
// part that accepts the properties allowed; it returns what it read, or
// a result when the list is wrong.
func mqttProperties(b []byte, p *mqttPacket, allowed uint64, unknown int) (int, int) {
	l, n, ok := mqttVarint(b)
	if !ok || uint32(len(b)-n) < l {
		return 0, mqttInvalid
	}
	props := b[n : n+int(l)]
	var seen uint64
	for len(props) > 0 {
		pr := mqttProps[props[0]]
		f := pr.field
		if f == 0 || allowed&(1<<f) == 0 {
			return 0, unknown
		}
		if f != mfUserProperty && seen&(1<<f) != 0 {
			return 0, mqttInvalid
		}
		seen |= 1 << f
		props = props[1:]
		switch pr.kind {
		case 1, 2, 4:
			if len(props) < int(pr.kind) {
				return 0, mqttInvalid
			}
			var v uint32
			for _, c := range props[:pr.kind] {
				v = v<<8 | uint32(c)
			}
			props = props[pr.kind:]
			p.num[f] = v
			if mqttBoolProps&(1<<f) != 0 && v > 1 || mqttNonZeroProps&(1<<f) != 0 && v == 0 {
				return 0, mqttInvalid
			}
		case 's':
			s, m := mqttString(props)
			if m == 0 {
				return 0, mqttInvalid
			}
			props = props[m:]
			p.str[f] = s
			if mqttNonZeroProps&(1<<f) != 0 && len(s) == 0 {
				return 0, mqttInvalid
			}
		case 'u':
			for i := 0; i < 2; i++ {
				_, m := mqttString(props)
				if m == 0 {
					return 0, mqttInvalid
				}
				props = props[m:]
			}
		}
	}
	return n + int(l), mqttValid
}

func mqttConnectPacket(b []byte, p *mqttPacket) int {
	orig := len(b)
	name, n := mqttString(b)
	if n == 0 || !eqFoldASCII(name, "MQTT") && !eqFoldASCII(name, "MQIsdp") {
		return mqttInvalid
	}
	p.str[mfProtocolName], b = name, b[n:]
	if len(b) < 1 {
		return mqttInvalid
	}
	p.version, b = b[0], b[1:]
	if p.version != 3 && p.version != 4 && p.version != 5 {
		return mqttInvalid
	}
	if len(b) < 1 || b[0]&0x01 != 0 {
		return mqttInvalid
	}
	p.flags, b = b[0], b[1:]
	// QoS without the Will flag nor Will Retain.
	if p.flags&(0x04|0x18|0x20) == 0x18 {
		return mqttInvalid
	}
	if len(b) < 2 {
		return mqttInvalid
	}
	p.num[mfKeepalive], b = uint32(b[0])<<8|uint32(b[1]), b[2:]
	if p.version == 5 {
		n, res := mqttProperties(b, p, mqttConnectProps, mqttInvalid)
		if res != mqttValid {
			return res
		}
		b = b[n:]
	}
	if len(p.str[mfAuthenticationMethod]) == 0 && len(p.str[mfAuthenticationData]) > 0 {
		return mqttInvalid
	}
	id, n := mqttString(b)
	if n == 0 {
		return mqttInvalid
	}
	p.str[mfClientIdentifier], b = id, b[n:]
	will := p.flags&0x04 != 0
	if p.version == 5 && will {
		n, res := mqttProperties(b, p, mqttWillProps, mqttInvalid)
		if res != mqttValid {
			return res
		}
		b = b[n:]
	}
	for _, f := range [...]struct {
		field int
		on    bool
	}{{mfWillTopic, will}, {mfWillPayload, will}, {mfUsername, p.flags&0x80 != 0}, {mfPassword, p.flags&0x40 != 0}} {
		if !f.on {
			continue
		}
		s, n := mqttString(b)
		if n == 0 {
			return mqttInvalid
		}
		p.str[f.field], b = s, b[n:]
	}
	if uint32(orig-len(b)) != p.length {
		return mqttInvalid
	}
	return mqttValid
}

// mqttConnackPacket reads a CONNACK. As in HAProxy, the version is
// guessed from what follows the fixed header (two bytes: 3.1.1), and an
// unknown property asks for more bytes.
func mqttConnackPacket(b []byte, p *mqttPacket) int {
	orig := len(b)
	switch {
	case len(b) < 2:
		return mqttInvalid
	case len(b) == 2:
		p.version = 4
	default:
		p.version = 5
	}
	if b[0]&0xfe != 0 {
		return mqttInvalid
	}
	p.flags, p.num[mfReasonCode], b = b[0], uint32(b[1]), b[2:]
	if p.version == 5 {
		n, res := mqttProperties(b, p, mqttConnackProps, mqttMore)
		if res != mqttValid {
			return res
		}
		b = b[n:]
	}
	if uint32(orig-len(b)) != p.length {
		return mqttInvalid
	}
	return mqttValid
}

// mqttTypeID reads a packet type argument: a number read as HAProxy's
// strl2ui (unchecked), or a type's name.
func mqttTypeID(s string) int {
	if id := int32(strl2ui([]byte(s))); id >= 1 && id < mqttTypes {
		return int(id)
	}
	for i, n := range mqttTypeNames {
		if i > 0 && eqFoldASCII([]byte(s), n) {
			return i
		}
	}
	return 0
}

func mqttFieldArgs(env *Env, a []Arg) error {
	typ := mqttTypeID(a[0].S)
	if typ == 0 {
		return fmt.Errorf("Unknown MQTT type '%s'", a[0].S)
	}
	field := 0
	for i, n := range mqttFieldNames {
		if eqFoldASCII([]byte(a[1].S), n) {
			if mqttFields[typ]&(1<<i) != 0 {
				field = i
			}
			break
		}
	}
	if field == 0 {
		return fmt.Errorf("Unknown MQTT field name '%s' for packet type '%s'", a[1].S, a[0].S)
	}
	a[0].I, a[1].I = int64(typ), int64(field)
	return nil
}

func convMQTTIsValid(r *Request, a []Arg, s *Sample) bool {
	var p mqttPacket
	v := mqttValidate(s.B, &p)
	r.final = v != mqttMore
	if v == mqttMore {
		return false
	}
	s.setBool(v == mqttValid)
	return true
}

// mqttWillFields are the CONNECT fields that exist only with a Will, in
// MQTT 5.0.
var mqttWillFields = mqttBits(mfPayloadFormatIndicator, mfMessageExpiryInterval, mfContentType, mfResponseTopic,
	mfCorrelationData, mfDelayInterval)

// mqttNumFields are the fields given as decimal numbers.
var mqttNumFields = mqttBits(mfFlags, mfProtocolVersion, mfKeepalive, mfReasonCode, mfPayloadFormatIndicator,
	mfMessageExpiryInterval, mfSessionExpiryInterval, mfRequestProblemInformation, mfDelayInterval,
	mfRequestResponseInformation, mfReceiveMaximum, mfTopicAliasMaximum, mfMaximumPacketSize, mfServerKeepalive,
	mfMaximumQoS, mfRetainAvailable, mfWildcardSubscriptionAvailable, mfSubscriptionIdentifiersAvailable,
	mfSharedSubscriptionAvailable)

func convMQTTFieldValue(r *Request, a []Arg, s *Sample) bool {
	var p mqttPacket
	typ, f := int(a[0].I), int(a[1].I)
	v := mqttValidate(s.B, &p)
	r.final = v != mqttMore
	if v != mqttValid || int(p.typ) != typ || typ != mqttConnect && typ != mqttConnack {
		return false
	}
	// The argument accepts user properties, which are not kept.
	if f == mfUserProperty {
		return false
	}
	// The 5.0 properties, by their number.
	if f >= mfPayloadFormatIndicator && p.version != 5 || typ == mqttConnect && mqttWillFields&(1<<f) != 0 && p.flags&0x04 == 0 {
		return false
	}
	var out []byte
	switch {
	case f == mfFlags:
		out = strconv.AppendUint(r.alloc(3), uint64(p.flags), 10)
	case f == mfProtocolVersion:
		out = strconv.AppendUint(r.alloc(3), uint64(p.version), 10)
	case mqttNumFields&(1<<f) != 0:
		out = strconv.AppendUint(r.alloc(10), uint64(p.num[f]), 10)
	default:
		out = p.str[f]
	}
	if len(out) == 0 {
		return false
	}
	s.T, s.B = TBin, out
	return true
}
