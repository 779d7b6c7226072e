package arguments

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
)

// memory's create_entities and a made-up tool with an object inside an
// object: the schemas nested errors are about.
const (
	entitiesSchema = `{"type":"object","required":["entities"],"properties":{"entities":{"type":"array","items":{"type":"object","additionalProperties":false,
		"required":["name","entityType","observations"],"properties":{"name":{"type":"string","description":"The name of the entity"},
		"entityType":{"type":"string","description":"The type of the entity"},"observations":{"type":"array","items":{"type":"string"}}}}}}}`
	deploySchema = `{"type":"object","required":["target"],"properties":{"target":{"type":"object","required":["cluster","replicas"],
		"properties":{"cluster":{"type":"string","enum":["eu-1","us-1"]},"replicas":{"type":"integer","minimum":1,"maximum":10},
		"labels":{"type":"object","properties":{"team":{"type":"string","pattern":"^[a-z]+$"}}}}}}}`
)

// TestNestedArgumentErrors: a wrong value deep in the arguments is named
// by its path in them, with what was expected, what was sent and an
// example of the right shape, through Validate as execute_tool calls it.
func TestNestedArgumentErrors(t *testing.T) {
	cat, err := index.NewCatalog([]index.DomainSpec{
		{Name: "memory", Tools: []index.ToolSpec{{Name: "create_entities", InputSchema: json.RawMessage(entitiesSchema)}}},
		{Name: "ops", Tools: []index.ToolSpec{{Name: "deploy", InputSchema: json.RawMessage(deploySchema)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	entities, deploy := cat.Tool("memory__create_entities"), cat.Tool("ops__deploy")
	const entityShape = `; e.g. entities[0]: {"entityType":"person","name":"Alice Martin","observations":["Prefers morning meetings"]}`
	tests := []struct {
		name string
		tool *index.Tool
		args string
		want string // the message between "invalid arguments for TOOL: " and ". Call get_tool_schema"
	}{
		{"a string for an array of strings", entities, `{"entities":[{"name":"Alice","entityType":"person","observations":"likes tea"}]}`,
			`entities[0].observations must be an array; you sent "likes tea"` + entityShape},
		{"a property missing in an array's object", entities, `{"entities":[{"name":"Alice","entityType":"person","observations":[]},{"name":"Bob","observations":["x"]}]}`,
			`entities[1].entityType is required: add it to entities[1]` + strings.ReplaceAll(entityShape, "[0]", "[1]")},
		{"an unknown property in an array's object", entities, `{"entities":[{"name":"Alice","entityType":"person","observations":["x"],"age":30}]}`,
			`entities[0] has no property "age": its properties are entityType, name, observations` + entityShape},
		{"a number among strings", entities, `{"entities":[{"name":"Alice","entityType":"person","observations":["x",5]}]}`,
			`entities[0].observations[1] must be a string; you sent 5; e.g. entities[0].observations: ["Prefers morning meetings"]`},
		{"an object for an array, at the top", entities, `{"entities":{"name":"Alice"}}`,
			`entities must be an array; you sent an object of 1 property; e.g. entities: [{"entityType":"person","name":"Alice Martin","observations":["Prefers morning meetings"]}]`},
		{"an object's enum", deploy, `{"target":{"cluster":"mars","replicas":2}}`,
			`target.cluster must be one of eu-1, us-1; you sent "mars"`},
		{"an object's bound", deploy, `{"target":{"cluster":"eu-1","replicas":50}}`,
			`target.replicas must be at most 10; you sent 50`},
		{"an object's required property", deploy, `{"target":{"cluster":"eu-1"}}`,
			`target.replicas is required: add it to target; e.g. target: {"cluster":"eu-1","replicas":1}`},
		{"what the checker does not read: the validator's words, at the path", deploy, `{"target":{"cluster":"eu-1","replicas":2,"labels":{"team":"Ops 1"}}}`,
			`target.labels.team: pattern: "Ops 1" does not match`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				t.Fatal(err)
			}
			err := Validate(tc.tool, args)
			if err == nil {
				t.Fatalf("Validate(%s) = nil, want an error", tc.args)
			}
			prefix := "invalid arguments for " + tc.tool.QualifiedName + ": "
			got := strings.TrimSuffix(strings.TrimPrefix(err.Error(), prefix), ". Call get_tool_schema for its schema")
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("Validate(%s) = %q\nwant it to start %q", tc.args, got, tc.want)
			}
			if strings.Contains(got, "validating") || strings.Contains(got, "/properties/") {
				t.Errorf("Validate(%s) = %q: the validator's internals", tc.args, got)
			}
		})
	}
	// Every example of the right shape validates where it goes.
	var args map[string]any
	json.Unmarshal([]byte(`{"entities":[{"name":"Alice","entityType":"person","observations":["Prefers morning meetings"]}]}`), &args)
	if err := Validate(entities, args); err != nil {
		t.Errorf("the example of entities[0] does not validate: %v", err)
	}
}

func TestArgumentPath(t *testing.T) {
	for pointer, want := range map[string]string{
		"/properties/entities/items/properties/observations/items": "entities[].observations[]",
		"/properties/a~1b":         "a/b",
		"":                         "",
		"/anyOf/0/properties/mode": "mode",
	} {
		if got := argumentPath(pointer); got != want {
			t.Errorf("argumentPath(%q) = %q, want %q", pointer, got, want)
		}
	}
}
