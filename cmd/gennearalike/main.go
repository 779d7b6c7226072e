// Command gennearalike writes the near-alike eval dataset: a cloud
// provider's catalog whose services each have the same five tools (list,
// get, create, update, delete), with requests written per service and per
// action, so that requests for sibling tools share most of their words
// (the service's noun, a resource's name, the template's phrasing). It is
// the test set of the feedback channel's sibling problem (issue 46, item
// 5): a recorded run of list_buckets must not take the requests of
// delete_bucket. Seeded; the output is checked in:
//
//	go run ./cmd/gennearalike -out eval/datasets/near-alike
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

// service is one of the provider's services: its tools' noun, the words
// a request may call a resource by, and names of resources.
type service struct {
	group    string // the group and the tools' suffix
	singular string // in tool descriptions
	plural   string
	nouns    [][2]string // (singular, plural) a request may use
	names    []string    // resource names
	detail   string      // what a resource has, in descriptions
	change   string      // what an update changes, in requests
}

var services = []service{
	{"bucket", "storage bucket", "storage buckets", [][2]string{{"bucket", "buckets"}, {"storage bucket", "storage buckets"}}, []string{"logs-prod", "media-assets", "backups-eu"}, "region, storage class and size", "its storage class to archive"},
	{"instance", "virtual machine instance", "virtual machine instances", [][2]string{{"VM", "VMs"}, {"instance", "instances"}, {"virtual machine", "virtual machines"}}, []string{"web-01", "batch-worker", "db-replica"}, "machine type, zone and state", "its machine type to 8 vCPUs"},
	{"database", "managed database", "managed databases", [][2]string{{"database", "databases"}, {"postgres database", "postgres databases"}}, []string{"orders-db", "analytics", "users-primary"}, "engine, version and endpoint", "its engine version"},
	{"dns_zone", "DNS zone", "DNS zones", [][2]string{{"DNS zone", "DNS zones"}, {"zone", "zones"}}, []string{"example.com", "internal.corp", "shop.io"}, "name servers and record count", "its TTL to 300 seconds"},
	{"load_balancer", "load balancer", "load balancers", [][2]string{{"load balancer", "load balancers"}, {"LB", "LBs"}}, []string{"frontend-lb", "api-gateway-lb", "internal-lb"}, "listeners, targets and health", "its health check path"},
	{"queue", "message queue", "message queues", [][2]string{{"queue", "queues"}, {"message queue", "message queues"}}, []string{"email-jobs", "billing-events", "dead-letter"}, "depth, retention and visibility timeout", "its retention to 7 days"},
	{"function", "serverless function", "serverless functions", [][2]string{{"function", "functions"}, {"lambda", "lambdas"}, {"serverless function", "serverless functions"}}, []string{"resize-images", "nightly-report", "webhook-handler"}, "runtime, memory and trigger", "its memory to 1 GB"},
	{"secret", "secret", "secrets", [][2]string{{"secret", "secrets"}, {"stored credential", "stored credentials"}}, []string{"stripe-api-key", "db-password", "oauth-client"}, "versions and rotation schedule", "its rotation to every 30 days"},
	{"certificate", "TLS certificate", "TLS certificates", [][2]string{{"certificate", "certificates"}, {"TLS cert", "TLS certs"}, {"SSL certificate", "SSL certificates"}}, []string{"example.com", "api.shop.io", "wildcard-corp"}, "domains, issuer and expiry", "its domains to add www"},
	{"network", "virtual network", "virtual networks", [][2]string{{"VPC", "VPCs"}, {"virtual network", "virtual networks"}, {"network", "networks"}}, []string{"prod-vpc", "staging-net", "shared-services"}, "CIDR range and subnets", "its CIDR range"},
	{"snapshot", "disk snapshot", "disk snapshots", [][2]string{{"snapshot", "snapshots"}, {"disk snapshot", "disk snapshots"}}, []string{"web-01-nightly", "db-before-upgrade", "weekly-archive"}, "source disk, size and creation time", "its description and labels"},
	{"volume", "block storage volume", "block storage volumes", [][2]string{{"volume", "volumes"}, {"disk", "disks"}, {"block volume", "block volumes"}}, []string{"data-disk-1", "scratch", "pg-data"}, "size, type and attachment", "its size to 500 GB"},
	{"user", "IAM user", "IAM users", [][2]string{{"IAM user", "IAM users"}, {"user account", "user accounts"}}, []string{"alice", "ci-bot", "bob.smith"}, "groups, policies and last sign-in", "its group memberships"},
	{"role", "IAM role", "IAM roles", [][2]string{{"role", "roles"}, {"IAM role", "IAM roles"}}, []string{"deployer", "read-only-auditor", "billing-admin"}, "trust policy and permissions", "its permissions to add S3 read"},
	{"cluster", "Kubernetes cluster", "Kubernetes clusters", [][2]string{{"Kubernetes cluster", "Kubernetes clusters"}, {"k8s cluster", "k8s clusters"}, {"cluster", "clusters"}}, []string{"prod-gke", "dev-cluster", "ml-training"}, "version, node pools and endpoint", "its node count to 6"},
	{"registry", "container registry", "container registries", [][2]string{{"container registry", "container registries"}, {"image registry", "image registries"}}, []string{"team-images", "base-images", "ml-models"}, "repositories, size and access", "its retention of untagged images"},
	{"firewall_rule", "firewall rule", "firewall rules", [][2]string{{"firewall rule", "firewall rules"}, {"security rule", "security rules"}}, []string{"allow-ssh", "deny-all-inbound", "allow-https"}, "direction, ports and sources", "its allowed ports to 443 only"},
	{"alarm", "monitoring alarm", "monitoring alarms", [][2]string{{"alarm", "alarms"}, {"alert", "alerts"}, {"monitoring alarm", "monitoring alarms"}}, []string{"high-cpu", "disk-full", "5xx-rate"}, "metric, threshold and state", "its threshold to 90 percent"},
}

var projects = []string{"prod", "staging", "acme-web", "data-platform"}
var regions = []string{"eu-west-1", "us-east-1", "asia-south-1"}

// templates per action: {s} a singular noun, {p} a plural, {n} a
// resource's name, {r} a region, {j} a project, {c}
// what an update changes.
var templates = map[string][]string{
	"list": {
		"show me all the {p} in project {j}",
		"which {p} do we have in {r}?",
		"give me an inventory of our {p}",
		"how many {p} are there in the {j} account",
	},
	"get": {
		"show the details of the {s} {n}",
		"what is the current configuration of {s} {n}?",
		"look up {s} {n} and tell me its status",
		"I need the settings of the {s} called {n}",
	},
	"create": {
		"make a new {s} named {n} in {r}",
		"set up a {s} called {n} for project {j}",
		"provision another {s}, {n}, in {r}",
		"I need a fresh {s} {n} in the {j} project",
	},
	"update": {
		"change {c} on the {s} {n}",
		"modify the {s} {n}: set {c}",
		"edit the configuration of {s} {n} to change {c}",
		"reconfigure {s} {n} so that {c} changes",
	},
	"delete": {
		"remove the {s} {n}, we no longer need it",
		"delete {s} {n} permanently",
		"tear down the {s} {n} in {r}",
		"get rid of the old {s} {n}",
	},
}

var actions = []string{"list", "get", "create", "update", "delete"}

func main() {
	out := flag.String("out", "", "output folder (required)")
	seed := flag.Int64("seed", 46, "random seed")
	perTool := flag.Int("per-tool", 3, "requests per tool")
	flag.Parse()
	if err := run(*out, *seed, *perTool); err != nil {
		fmt.Fprintln(os.Stderr, "gennearalike:", err)
		os.Exit(1)
	}
}

func toolName(action string, s service) string {
	if action == "list" {
		return "list_" + plural(s.group)
	}
	return action + "_" + s.group
}

func plural(g string) string {
	switch {
	case strings.HasSuffix(g, "y"):
		return strings.TrimSuffix(g, "y") + "ies"
	case strings.HasSuffix(g, "s"):
		return g + "es"
	}
	return g + "s"
}

func description(action string, s service) string {
	switch action {
	case "list":
		return fmt.Sprintf("List the %s of a project, optionally in one region. Returns each one's name, %s.", s.plural, s.detail)
	case "get":
		return fmt.Sprintf("Get one %s of a project by name: its %s.", s.singular, s.detail)
	case "create":
		return fmt.Sprintf("Create a %s in a project and region.", s.singular)
	case "update":
		return fmt.Sprintf("Update the settings of a %s: %s.", s.singular, s.detail)
	}
	return fmt.Sprintf("Delete a %s of a project by name. This cannot be undone.", s.singular)
}

func schema(action string, s service) map[string]any {
	props := map[string]any{
		"project": map[string]any{"type": "string", "description": "Project ID."},
	}
	required := []string{"project"}
	switch action {
	case "list":
		props["region"] = map[string]any{"type": "string", "description": "Only the " + s.plural + " of this region."}
		props["page_token"] = map[string]any{"type": "string", "description": "Token of the next page."}
	case "create":
		props["name"] = map[string]any{"type": "string", "description": "Name of the new " + s.singular + "."}
		props["region"] = map[string]any{"type": "string", "description": "Region, e.g. eu-west-1."}
		props["labels"] = map[string]any{"type": "object", "description": "Labels to attach.", "additionalProperties": map[string]any{"type": "string"}}
		required = append(required, "name", "region")
	case "update":
		props["name"] = map[string]any{"type": "string", "description": "Name of the " + s.singular + "."}
		props["settings"] = map[string]any{"type": "object", "description": "The settings to change: " + s.detail + ".", "additionalProperties": true}
		required = append(required, "name", "settings")
	default:
		props["name"] = map[string]any{"type": "string", "description": "Name of the " + s.singular + "."}
		required = append(required, "name")
	}
	return map[string]any{"type": "object", "properties": props, "required": required}
}

func fill(tmpl string, s service, r *rand.Rand) string {
	noun := s.nouns[r.Intn(len(s.nouns))]
	repl := strings.NewReplacer(
		"{s}", noun[0], "{p}", noun[1], "{n}", s.names[r.Intn(len(s.names))],
		"{r}", regions[r.Intn(len(regions))], "{j}", projects[r.Intn(len(projects))], "{c}", s.change)
	return repl.Replace(tmpl)
}

func run(out string, seed int64, perTool int) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	if perTool < 1 || perTool > 4 {
		return fmt.Errorf("-per-tool %d: want 1 to 4 (there are 4 templates per action)", perTool)
	}
	r := rand.New(rand.NewSource(seed))
	var tools []map[string]any
	type query struct {
		ID       string   `json:"id"`
		Query    string   `json:"query"`
		Relevant []string `json:"relevant"`
		Category string   `json:"category"`
	}
	var queries []query
	for _, s := range services {
		for _, a := range actions {
			name := toolName(a, s)
			tools = append(tools, map[string]any{
				"name": name, "description": description(a, s), "inputSchema": schema(a, s), "group": s.group,
				"annotations": map[string]any{"readOnlyHint": a == "list" || a == "get", "destructiveHint": a == "delete"},
			})
			for i, ti := range r.Perm(len(templates[a]))[:perTool] {
				queries = append(queries, query{
					ID: fmt.Sprintf("%s-%d", name, i+1), Query: fill(templates[a][ti], s, r),
					Relevant: []string{"nimbus/" + name}, Category: a,
				})
			}
		}
	}
	cat := map[string]any{"domains": []any{map[string]any{
		"name":        "nimbus",
		"description": "Nimbus Cloud: storage, compute, databases, networking, identity and monitoring of a cloud account",
		"tools":       tools,
	}}}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(cat, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "catalog.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(out, "queries.jsonl"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, q := range queries {
		if err := enc.Encode(q); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
