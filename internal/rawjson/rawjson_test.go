package rawjson

import (
	"strings"
	"testing"
)

func TestEachMember(t *testing.T) {
	obj := []byte(` { "a" : 1 , "b\u0022":"x}" ,"c":[{"d":"]"}], "e":null } `)[1:]
	var got []string
	EachMember(obj, func(name string, member, value []byte) bool {
		got = append(got, name+"="+string(value)+" ("+string(member)+")")
		return true
	})
	want := []string{`a=1 ("a" : 1)`, `b"="x}" ("b\u0022":"x}")`, `c=[{"d":"]"}] ("c":[{"d":"]"}])`, `e=null ("e":null)`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("EachMember = %q, want %q", got, want)
	}
	var n int
	EachElement([]byte(`[1, "a,b" ,{"x":[2,3]},[]]`), func(v []byte) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("EachElement went on after false: %d elements", n)
	}
}

func TestSDKID(t *testing.T) {
	for _, c := range []struct {
		msg, id string
		ok      bool
	}{
		{`{"jsonrpc":"2.0","id":17,"result":{}}`, `17`, true},
		{`{"jsonrpc":"2.0","id":"a\"b","result":{}}`, `"a\"b"`, true},
		{`{"jsonrpc":"2.0","method":"x"}`, ``, false},
		{`{"id":1,"jsonrpc":"2.0","result":{}}`, ``, false},
	} {
		start, end, ok := SDKID([]byte(c.msg))
		if ok != c.ok || ok && c.msg[start:end] != c.id {
			t.Errorf("SDKID(%s) = %d, %d, %v; want %s, %v", c.msg, start, end, ok, c.id, c.ok)
		}
	}
}

func TestDeeper(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		data string
		want bool
	}{
		{deep(3), false},
		{deep(4), true},
		{`{"a":"[[[[[["}`, false},
		{`{"a":"\"[[[[","b":[[]]}`, false},
		{`[{"a":[{}]}]`, true},
	} {
		if got := Deeper([]byte(c.data), 3); got != c.want {
			t.Errorf("Deeper(%s, 3) = %v, want %v", c.data, got, c.want)
		}
	}
}
