package sample

import (
	"encoding/hex"
	"strings"
	"testing"
)

// FIX and MQTT messages of HAProxy's reg-tests (converter/fix.vtc and
// mqtt.vtc), hex-encoded.
const (
	fix44 = "383d4649582e342e3401393d3130320133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201"
	fix40 = "383d4649582e342e3001393d36360133353d410133343d310134393d4558454355544f520135323d32303230313032392d31303a35343a31390135363d434c49454e54310139383d30013130383d33300131303d31343701"
	fix50 = "383d464958542e312e3101393d3131360133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a31333a32322e36323401313132383d370139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f726401313133373d370131303d32303401"
	// Empty tag name, empty value, no '=', BeginString second, BodyLength
	// third, MsgType fourth, body length 100 and 105, checksum of 2 and 4
	// digits, wrong checksum.
	fixBadTag      = "383d4649582e342e3401393d3130300133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e353238013d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201"
	fixEmptyValue  = "383d4649582e342e3401393d3130310133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201"
	fixNoEq        = "383d4649582e342e3401393d3130300133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e353238013938013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201"
	fixFirstTag    = "393d31303201383d4649582e342e340133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201"
	fixSecondTag   = "383d4649582e342e340133353d4101393d3130320134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201"
	fixThirdTag    = "383d4649582e342e3401393d3130320134393d434c49454e54310133353d410135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201"
	fixShortBody   = "383d4649582e342e3401393d3130300133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201"
	fixLongBody    = "383d4649582e342e3401393d3130350133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353201585858"
	fixShortSum    = "383d4649582e342e3401393d3130320133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d323501"
	fixLongSum     = "383d4649582e342e3401393d3130320133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d3235323001"
	fixWrongSum    = "383d4649582e342e3401393d3130320133353d410134393d434c49454e54310135363d4558454355544f520133343d310135323d32303230313032392d31333a30323a34342e3532380139383d30013130383d3330013134313d59013535333d557365726e616d65013535343d50617373776f72640131303d32353301"
	mqtt311        = "101a00044d51545404c2003c00000004746573740006706173737764"
	mqtt311Will    = "103a00044d51545404ee003c0008746573745f737562000977696c6c746f706963000b77696c6c7061796c6f61640004746573740006706173737764"
	mqtt50         = "101800044d5154540502003c032100140008746573745f737562"
	mqtt50Complex  = "107e00044d51545405ee003c182700000014170126000161000162260001630001642100140008746573745f7375622a03000a746578742f706c61696e08000c77696c6c727370746f7069632600016500016626000167000168000977696c6c746f706963000b77696c6c7061796c6f61640004746573740006706173737764"
	mqtt31         = "102400064d514973647003c200000008746573745f7375620004746573740006706173737764"
	mqttConnack311 = "20020000"
	mqttConnack50  = "20250000221100000078217fff24012501270000ffff22000a2600016100016226000163000164"
)

// TestFIXMQTT: expected values are HAProxy 2.6.12's for the same
// expressions (checked on haproxy with each message as a request body).
func TestFIXMQTT(t *testing.T) {
	for _, tc := range []struct {
		msg, conv, want string // want "<none>": no sample
	}{
		{fix44, "fix_is_valid", "1"},
		{fix40, "fix_is_valid", "1"},
		{fix50, "fix_is_valid", "1"},
		{fix44, "fix_tag_value(BeginString)", "FIX.4.4"},
		{fix44, "fix_tag_value(bodylength)", "102"},
		{fix44, "fix_tag_value(MsgType)", "A"},
		{fix44, "fix_tag_value(SenderCompID)", "CLIENT1"},
		{fix44, "fix_tag_value(56)", "EXECUTOR"},
		{fix44, "fix_tag_value(CheckSum)", "252"},
		{fix44, "fix_tag_value(553)", "Username"},
		{fix44, "fix_tag_value(1137)", "<none>"},
		{fix50, "fix_tag_value(1137)", "7"},
		{fix40, "fix_tag_value(8)", "FIX.4.0"},
		{fixBadTag, "fix_is_valid", "0"},
		{fixEmptyValue, "fix_is_valid", "0"},
		{fixNoEq, "fix_is_valid", "0"},
		{fixFirstTag, "fix_is_valid", "0"},
		{fixSecondTag, "fix_is_valid", "0"},
		{fixThirdTag, "fix_is_valid", "0"},
		{fixShortBody, "fix_is_valid", "0"},
		{fixLongBody, "fix_is_valid", "0"},
		{fixShortSum, "fix_is_valid", "0"},
		{fixLongSum, "fix_is_valid", "0"},
		{fixWrongSum, "fix_is_valid", "0"},
		{fixEmptyValue, "fix_tag_value(98)", "<none>"},
		{fixBadTag, "fix_tag_value(108)", "<none>"},
		{fixBadTag, "fix_tag_value(49)", "CLIENT1"},
		{fix44[:60], "fix_is_valid", "<none>"},
		{fix44[:200], "fix_is_valid", "<none>"},
		{fix44[:200], "fix_tag_value(49)", "CLIENT1"},
		{fix44[:200], "fix_tag_value(553)", "<none>"},
		{fix44[:len(fix44)-2], "fix_is_valid", "<none>"},

		{mqtt311, "mqtt_is_valid", "1"},
		{mqtt311, "mqtt_field_value(connect,username)", "test"},
		{mqtt311, "mqtt_field_value(connect,password)", "passwd"},
		{mqtt311, "mqtt_field_value(connect,client_identifier)", "<none>"},
		{mqtt311, "mqtt_field_value(connect,flags)", "194"},
		{mqtt311, "mqtt_field_value(1,keepalive)", "60"},
		{mqtt311, "mqtt_field_value(connect,protocol_version)", "4"},
		{mqtt311, "mqtt_field_value(connect,17)", "<none>"},
		{mqtt311Will, "mqtt_field_value(connect,will_topic)", "willtopic"},
		{mqtt311Will, "mqtt_field_value(connect,will_payload)", "willpayload"},
		{mqtt50, "mqtt_is_valid", "1"},
		{mqtt50, "mqtt_field_value(connect,33)", "20"},
		{mqtt50, "mqtt_field_value(connect,17)", "0"},
		{mqtt50, "mqtt_field_value(connect,1)", "<none>"},
		{mqtt50Complex, "mqtt_is_valid", "1"},
		{mqtt50Complex, "mqtt_field_value(Connect,PROTOCOL_NAME)", "MQTT"},
		{mqtt50Complex, "mqtt_field_value(connect,protocol_version)", "5"},
		{mqtt50Complex, "mqtt_field_value(connect,flags)", "238"},
		{mqtt50Complex, "mqtt_field_value(connect,client_identifier)", "test_sub"},
		{mqtt50Complex, "mqtt_field_value(connect,39)", "20"},
		{mqtt50Complex, "mqtt_field_value(connect,23)", "1"},
		{mqtt50Complex, "mqtt_field_value(connect,3)", "text/plain"},
		{mqtt50Complex, "mqtt_field_value(connect,8)", "willrsptopic"},
		{mqtt50Complex, "mqtt_field_value(connect,24)", "0"},
		{mqtt50Complex, "mqtt_field_value(connect,38)", "<none>"},
		{mqtt50Complex, "mqtt_field_value(connack,flags)", "<none>"},
		{mqtt31, "mqtt_is_valid", "1"},
		{mqtt31, "mqtt_field_value(connect,protocol_name)", "MQIsdp"},
		{mqttConnack311, "mqtt_is_valid", "1"},
		{mqttConnack311, "mqtt_field_value(connack,protocol_version)", "4"},
		{mqttConnack311, "mqtt_field_value(connack,17)", "<none>"},
		{mqttConnack50, "mqtt_is_valid", "1"},
		{mqttConnack50, "mqtt_field_value(connack,protocol_version)", "5"},
		{mqttConnack50, "mqtt_field_value(connack,reason_code)", "0"},
		{mqttConnack50, "mqtt_field_value(connack,17)", "120"},
		{mqttConnack50, "mqtt_field_value(connack,33)", "32767"},
		{mqttConnack50, "mqtt_field_value(connack,36)", "1"},
		{mqttConnack50, "mqtt_field_value(connack,37)", "1"},
		{mqttConnack50, "mqtt_field_value(connack,39)", "65535"},
		{mqttConnack50, "mqtt_field_value(connack,34)", "10"},
		{mqttConnack50, "mqtt_field_value(2,18)", "<none>"},
		{"21020000", "mqtt_is_valid", "0"},                                             // CONNACK with flags
		{"d000", "mqtt_is_valid", "0"},                                                 // PINGREQ
		{"111400044d5154540402003c0008746573745f737562", "mqtt_is_valid", "0"},         // CONNECT with flags
		{"10ffffffff1400044d5154540402003c0008746573745f737562", "mqtt_is_valid", "0"}, // 5-byte length
		{"2009000006120003616263", "mqtt_field_value(connack,18)", "abc"},
		{"20050000022402", "mqtt_is_valid", "0"},        // maximum QoS 2
		{"200600000399000a", "mqtt_is_valid", "<none>"}, // unknown CONNACK property
		{"20", "mqtt_is_valid", "<none>"},
		{mqtt50Complex[:100], "mqtt_is_valid", "<none>"},
		{mqtt50Complex[:100], "mqtt_field_value(connect,flags)", "<none>"},
		{"2080", "mqtt_is_valid", "0"},
	} {
		if _, err := hex.DecodeString(tc.msg); err != nil {
			t.Fatalf("%s: %v", tc.msg, err)
		}
		expr := "bin(" + tc.msg + ")," + tc.conv
		got, ok := evalText(t, &Request{}, expr)
		if !ok {
			got = "<none>"
		}
		if got != tc.want {
			t.Errorf("%s on %.20s...: %q, want %q", tc.conv, tc.msg, got, tc.want)
		}
	}
}

// partialStream is a stream whose received bytes may still grow.
type partialStream struct{ testStream }

func (p *partialStream) Partial(res bool) bool { return true }

// TestFIXMQTTInspection: while bytes may still come, a message cut short
// leaves the condition undecided; a wrong one, or one without the field,
// decides it (HAProxy's converters clear SMP_F_MAY_CHANGE).
func TestFIXMQTTInspection(t *testing.T) {
	for _, tc := range []struct {
		msg, cond   string
		match, miss bool
	}{
		{fix44, "{ req.payload(0,0),fix_is_valid }", true, false},
		{fix44[:100], "{ req.payload(0,0),fix_is_valid }", false, true},
		{fixWrongSum, "{ req.payload(0,0),fix_is_valid }", false, false},
		{fix44[:200], "{ req.payload(0,0),fix_tag_value(553) -m found }", false, true},
		{fix44, "{ req.payload(0,0),fix_tag_value(1137) -m found }", false, false},
		{fixBadTag, "{ req.payload(0,0),fix_tag_value(108) -m found }", false, false},
		// The tag is there: a later converter that fails decides too.
		{fix44[:200], "{ req.payload(0,0),fix_tag_value(49),strcmp(txn.none) -m found }", false, false},
		{fix44[:40], "{ req.payload(0,0),fix_tag_value(49),strcmp(txn.none) -m found }", false, true},
		{mqtt50Complex[:60], "{ req.payload(0,0),mqtt_is_valid }", false, true},
		{mqtt50Complex[:60], "{ req.payload(0,0),mqtt_field_value(connect,username) -m found }", false, true},
		{mqtt50Complex, "{ req.payload(0,0),mqtt_field_value(connect,username) -m found }", true, false},
		{mqtt311, "{ req.payload(0,0),mqtt_field_value(connect,client_identifier) -m found }", false, false},
		{"d000", "{ req.payload(0,0),mqtt_field_value(connect,username) -m found }", false, false},
	} {
		b, _ := hex.DecodeString(tc.msg)
		c, err := CompileCond(nil, strings.Fields("if "+tc.cond), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.cond, err)
		}
		r := &Request{Stream: &partialStream{testStream{payload: b}}}
		match, miss := c.EvalPartial(r)
		if match != tc.match || miss != tc.miss {
			t.Errorf("%s on %.20s...: match %v miss %v, want %v %v", tc.cond, tc.msg, match, miss, tc.match, tc.miss)
		}
	}
}

func FuzzFIX(f *testing.F) {
	for _, h := range []string{fix44, fix40, fix50, fixBadTag, fixNoEq, fixLongBody, fix44[:100]} {
		b, _ := hex.DecodeString(h)
		f.Add(b, uint32(49))
	}
	f.Fuzz(func(t *testing.T, msg []byte, tag uint32) {
		v := fixValidate(msg)
		if v == fixValid && len(msg) < fixMinSize {
			t.Fatalf("valid message of %d bytes", len(msg))
		}
		s := Sample{T: TBin, B: msg}
		convFixIsValid(&Request{}, nil, &s)
		s = Sample{T: TBin, B: msg}
		convFixTagValue(&Request{}, []Arg{{I: int64(tag)}}, &s)
	})
}

func FuzzMQTT(f *testing.F) {
	for _, h := range []string{mqtt311, mqtt311Will, mqtt50, mqtt50Complex, mqtt31, mqttConnack311, mqttConnack50, "2009000006120003616263"} {
		b, _ := hex.DecodeString(h)
		f.Add(b, uint8(1), uint8(mfUsername))
	}
	f.Fuzz(func(t *testing.T, msg []byte, typ, field uint8) {
		s := Sample{T: TBin, B: msg}
		convMQTTIsValid(&Request{}, nil, &s)
		s = Sample{T: TBin, B: msg}
		convMQTTFieldValue(&Request{}, []Arg{{I: int64(typ % mqttTypes)}, {I: int64(field % mfCount)}}, &s)
	})
}
