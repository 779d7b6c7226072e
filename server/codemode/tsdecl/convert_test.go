package tsdecl

import (
	"strings"
	"testing"
)

// typeText is the type of schema as a declaration prints it, at the
// indentation of a namespace's members.
func typeText(schema string) string {
	p := &printer{limit: 1 << 20}
	p.typ(typeOf([]byte(schema), DefaultMaxDepth), "")
	return p.b.String()
}

// TestTypes: each construct of JSON Schema a declaration says, and
// those it cannot say, as the type printed.
func TestTypes(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string
	}{
		{name: "string", schema: `{"type":"string"}`, want: `string`},
		{name: "integer is a number", schema: `{"type":"integer"}`, want: `number`},
		{name: "boolean", schema: `{"type":"boolean"}`, want: `boolean`},
		{name: "null", schema: `{"type":"null"}`, want: `null`},
		{name: "type array is a union", schema: `{"type":["string","integer","null"]}`, want: `string | number | null`},
		{name: "type array with a repeat", schema: `{"type":["number","integer"]}`, want: `number`},
		{name: "unknown type name", schema: `{"type":"date"}`, want: `unknown`},
		{name: "type not a string", schema: `{"type":5}`, want: `unknown`},
		{name: "string enum", schema: `{"type":"string","enum":["open","closed","all"]}`, want: `"open" | "closed" | "all"`},
		{name: "number enum", schema: `{"enum":[1,2.5,-3]}`, want: `1 | 2.5 | -3`},
		{name: "mixed enum with null", schema: `{"enum":["a",true,null]}`, want: `"a" | true | null`},
		{name: "enum with an object falls back to the type", schema: `{"type":"object","enum":[{"a":1}]}`, want: `{ [key: string]: unknown }`},
		{name: "enum strings escaped", schema: `{"enum":["say \"hi\"","<b>","a\nb"]}`, want: `"say \"hi\"" | "<b>" | "a\nb"`},
		{name: "empty enum", schema: `{"enum":[]}`, want: `never`},
		{name: "const", schema: `{"const":"v1"}`, want: `"v1"`},
		{name: "const over type", schema: `{"type":"number","const":42}`, want: `42`},
		{name: "required and optional", schema: `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}},"required":["a"]}`,
			want: `{ b?: string; a: number }`},
		{name: "properties keep the schema's order", schema: `{"properties":{"z":{"type":"string"},"m":{"type":"string"},"a":{"type":"string"}},"required":["z","m","a"]}`,
			want: `{ z: string; m: string; a: string }`},
		{name: "required without a schema", schema: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`,
			want: `{ a: string; b: unknown }`},
		{name: "keys that are not identifiers quoted", schema: `{"type":"object","properties":{"content-type":{"type":"string"},"2fa":{"type":"boolean"},"delete":{"type":"string"},"$ok":{"type":"string"}}}`,
			want: "{\n  \"content-type\"?: string;\n  \"2fa\"?: boolean;\n  delete?: string;\n  $ok?: string;\n}"},
		{name: "object without properties", schema: `{"type":"object"}`, want: `{ [key: string]: unknown }`},
		{name: "object with no properties", schema: `{"type":"object","properties":{}}`, want: `{}`},
		{name: "closed object without properties", schema: `{"type":"object","additionalProperties":false}`, want: `{}`},
		{name: "additionalProperties schema", schema: `{"type":"object","additionalProperties":{"type":"number"}}`, want: `{ [key: string]: number }`},
		{name: "additionalProperties beside properties", schema: `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":{"type":"number"}}`,
			want: `{ id: string } & { [key: string]: number }`},
		{name: "additionalProperties true beside properties", schema: `{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":true}`,
			want: `{ id?: string }`},
		{name: "additionalProperties empty schema beside properties", schema: `{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":{}}`,
			want: `{ id?: string; [key: string]: unknown }`},
		{name: "patternProperties", schema: `{"type":"object","patternProperties":{"^x-":{"type":"string"},"^n-":{"type":"integer"}},"additionalProperties":false}`,
			want: `{ [key: string]: string | number }`},
		{name: "object implied by properties", schema: `{"properties":{"a":{"type":"string"}}}`, want: `{ a?: string }`},
		{name: "array of strings", schema: `{"type":"array","items":{"type":"string"}}`, want: `string[]`},
		{name: "array without items", schema: `{"type":"array"}`, want: `unknown[]`},
		{name: "array of a union", schema: `{"type":"array","items":{"type":["string","number"]}}`, want: `Array<string | number>`},
		{name: "array of objects", schema: `{"type":"array","items":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}}`, want: `Array<{ n: string }>`},
		{name: "array of arrays", schema: `{"type":"array","items":{"type":"array","items":{"type":"number"}}}`, want: `Array<number[]>`},
		{name: "array implied by items", schema: `{"items":{"type":"boolean"}}`, want: `boolean[]`},
		{name: "prefixItems tuple, closed", schema: `{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"items":false}`, want: `[string, number]`},
		{name: "prefixItems tuple, open", schema: `{"type":"array","prefixItems":[{"type":"string"}]}`, want: `[string, ...unknown[]]`},
		{name: "draft-4 items array", schema: `{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"number"}}`, want: `[string, ...number[]]`},
		{name: "anyOf", schema: `{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}`, want: `string | string[]`},
		{name: "oneOf with constraints only left out", schema: `{"oneOf":[{"type":"string"},{"minLength":3}]}`, want: `string`},
		{name: "oneOf of required sets beside properties", schema: `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"oneOf":[{"required":["id"]},{"required":["name"]}]}`,
			want: `{ id?: string; name?: string } & ({ id: unknown } | { name: unknown })`},
		{name: "allOf", schema: `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"number"}}}]}`,
			want: `{ a?: string } & { b?: number }`},
		{name: "anyOf with an anything member", schema: `{"anyOf":[{"type":"string"},true]}`, want: `unknown`},
		{name: "nullable", schema: `{"type":"string","nullable":true}`, want: `string | null`},
		{name: "nullable already null", schema: `{"type":["string","null"],"nullable":true}`, want: `string | null`},
		{name: "$ref to $defs", schema: `{"type":"object","properties":{"owner":{"$ref":"#/$defs/User"}},"required":["owner"],"$defs":{"User":{"type":"object","properties":{"login":{"type":"string"}},"required":["login"]}}}`,
			want: `{ owner: { login: string } }`},
		{name: "$ref to definitions", schema: `{"type":"array","items":{"$ref":"#/definitions/Color"},"definitions":{"Color":{"enum":["red","green"]}}}`,
			want: `Array<"red" | "green">`},
		{name: "$ref with escaped pointer", schema: `{"$ref":"#/$defs/a~1b%20c","$defs":{"a/b c":{"type":"integer"}}}`, want: `number`},
		{name: "recursive $ref stops", schema: `{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}}`,
			want: `{ children?: unknown[] }`},
		{name: "$ref to the root", schema: `{"type":"object","properties":{"next":{"$ref":"#"}}}`, want: `{ next?: { next?: unknown } }`},
		{name: "remote $ref", schema: `{"$ref":"https://example.com/schema.json"}`, want: `unknown`},
		{name: "dangling $ref", schema: `{"$ref":"#/$defs/Missing"}`, want: `unknown`},
		{name: "anchor $ref", schema: `{"$ref":"#node"}`, want: `unknown`},
		{name: "schema true", schema: `true`, want: `unknown`},
		{name: "schema false", schema: `false`, want: `never`},
		{name: "empty schema", schema: `{}`, want: `unknown`},
		{name: "not JSON", schema: `{"type":`, want: `unknown`},
		{name: "not a schema", schema: `[1,2]`, want: `unknown`},
		{name: "conditionals are left to validation", schema: `{"if":{"type":"string"},"then":{"minLength":1}}`, want: `unknown`},
		{name: "repeated key: the last counts", schema: `{"type":"string","type":"number"}`, want: `number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := typeText(tt.schema); got != tt.want {
				t.Errorf("type of %s = %s, want %s", tt.schema, got, tt.want)
			}
		})
	}
}

// TestComments: descriptions and defaults become comments on their
// properties; a comment cannot be closed by the text in it.
func TestComments(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string
	}{
		{name: "description",
			schema: `{"type":"object","properties":{"q":{"type":"string","description":"The query"}}}`,
			want:   "{\n  /** The query */\n  q?: string;\n}"},
		{name: "default",
			schema: `{"type":"object","properties":{"n":{"type":"integer","description":"How many","default":10}}}`,
			want:   "{\n  /**\n   * How many\n   * @default 10\n   */\n  n?: number;\n}"},
		{name: "default alone",
			schema: `{"type":"object","properties":{"order":{"enum":["asc","desc"],"default":"asc"}}}`,
			want:   "{\n  /** @default \"asc\" */\n  order?: \"asc\" | \"desc\";\n}"},
		{name: "comment end escaped",
			schema: `{"type":"object","properties":{"glob":{"type":"string","description":"e.g. src/**/*.go"}}}`,
			want:   "{\n  /** e.g. src/**\\/*.go */\n  glob?: string;\n}"},
		{name: "lines, blank lines and control characters",
			schema: `{"type":"object","properties":{"a":{"type":"string","description":"First.\r\n\r\nSecond\u0007 line.  \n"}}}`,
			want:   "{\n  /**\n   * First.\n   *\n   * Second line.\n   */\n  a?: string;\n}"},
		{name: "description through a $ref",
			schema: `{"type":"object","properties":{"u":{"$ref":"#/$defs/U"}},"$defs":{"U":{"type":"string","description":"A user"}}}`,
			want:   "{\n  /** A user */\n  u?: string;\n}"},
		{name: "nested objects with comments are blocks",
			schema: `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string","description":"B"}}}}}`,
			want:   "{\n  a?: {\n    /** B */\n    b?: string;\n  };\n}"},
		{name: "long default cut",
			schema: `{"type":"object","properties":{"s":{"type":"string","default":"` + strings.Repeat("x", 300) + `"}}}`,
			want:   "{\n  /** @default \"" + strings.Repeat("x", maxDefault-1) + "… */\n  s?: string;\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := typeText(tt.schema); got != tt.want {
				t.Errorf("type of %s =\n%s\nwant\n%s", tt.schema, got, tt.want)
			}
		})
	}
}

// TestBounds: nesting past MaxDepth, and $refs that expand to many
// schemas, end in unknown, in little time.
func TestBounds(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, 20) + `{"type":"string"}` + strings.Repeat(`}`, 20)
	if got, want := typeText(deep), strings.Repeat("Array<", 8)+"unknown[]"+strings.Repeat(">", 8); got != want {
		t.Errorf("type of 20 nested arrays = %s, want %s", got, want)
	}
	// Ten definitions, each using the next ten times: 10^10 schemas if
	// expanded whole.
	var defs []string
	for i := range 10 {
		var props []string
		for j := range 10 {
			props = append(props, `"p`+string(rune('0'+j))+`":{"$ref":"#/$defs/d`+string(rune('0'+i+1))+`"}`)
		}
		defs = append(defs, `"d`+string(rune('0'+i))+`":{"type":"object","properties":{`+strings.Join(props, ",")+`}}`)
	}
	wide := `{"$ref":"#/$defs/d0","$defs":{` + strings.Join(defs, ",") + `,"d:":{"type":"string"}}}`
	c := &converter{root: must(parse([]byte(wide))), maxDepth: 100}
	c.convert(c.root, 0)
	if c.nodes > maxNodes {
		t.Errorf("converting a schema of wide $refs met %d schemas, want at most %d", c.nodes, maxNodes)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
