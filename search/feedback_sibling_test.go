package search

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index/store"
)

// TestFeedbackRunsOfOneKeepOffSiblings: on a catalog of near-alike tools
// (eval/datasets/near-alike: each service with list, get, create, update
// and delete tools), agents ran get_cluster after requests for a
// cluster's settings, and its siblings after theirs; none ran
// update_cluster. A request that needs update_cluster, which shares the
// service's words and the cluster's name with get_cluster's requests,
// keeps update_cluster first, as the plain ranking has it: the runs of
// get_cluster were made after requests that, by the recorded requests
// themselves, do not tell get_cluster from its siblings.
func TestFeedbackRunsOfOneKeepOffSiblings(t *testing.T) {
	eng := newCatalogEngine(t, filepath.Join("..", "eval", "datasets", "near-alike", "catalog.json"))
	ctx := context.Background()
	runs := []struct{ request, tool string }{
		{"I need the settings of the k8s cluster called dev-cluster", "nimbus__get_cluster"},
		{"what is the current configuration of cluster dev-cluster?", "nimbus__get_cluster"},
		{"show the details of the cluster ml-training", "nimbus__get_cluster"},
		{"give me an inventory of our Kubernetes clusters", "nimbus__list_clusters"},
		{"show me all the clusters in project data-platform", "nimbus__list_clusters"},
		{"provision another cluster, ml-training, in asia-south-1", "nimbus__create_cluster"},
		{"I need a fresh k8s cluster dev-cluster in the acme-web project", "nimbus__create_cluster"},
		{"remove the Kubernetes cluster prod-gke, we no longer need it", "nimbus__delete_cluster"},
		{"get rid of the old k8s cluster prod-gke", "nimbus__delete_cluster"},
	}
	var events []store.FeedbackEvent
	for _, r := range runs {
		events = append(events, fbEvents(r.request, r.tool, 2, 1, fbNow)...)
	}
	fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
	for _, tc := range []struct{ query, want string }{
		{"change its node count to 6 on the k8s cluster dev-cluster", "nimbus__update_cluster"},
		{"edit the configuration of Kubernetes cluster prod-gke to change its node count to 6", "nimbus__update_cluster"},
		{"modify the Kubernetes cluster ml-training: set its node count to 6", "nimbus__update_cluster"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			req := Request{Query: tc.query, Limit: 10}
			plain, err := eng.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(plain.Results); got[0] != tc.want {
				t.Fatalf("Search(%q) without feedback = %v, want %s first (the case needs the plain ranking right)", tc.query, got[:3], tc.want)
			}
			got, err := fb.Search(ctx, eng, req)
			if err != nil {
				t.Fatal(err)
			}
			if n := names(got.Results); n[0] != tc.want {
				t.Errorf("Search(%q) after runs of get_cluster and its siblings = %v, want %s still first", tc.query, n[:3], tc.want)
			}
		})
	}
}

// TestFeedbackAgreementOfRecordedRequests: the runs after a recorded
// request count less when recorded requests alike to it ran another
// tool (a leave-one-out check over the log: its words do not say which
// tool is meant), and whole when its look-alikes ran the same tool.
func TestFeedbackAgreementOfRecordedRequests(t *testing.T) {
	eng := newCatalogEngine(t, filepath.Join("..", "eval", "datasets", "near-alike", "catalog.json"))
	ctx := context.Background()
	const q, ran = "show the details of the cluster ml-training", "nimbus__get_cluster"
	score := func(extra ...store.FeedbackEvent) float64 {
		events := append(fbEvents(q, ran, 2, 1, fbNow), extra...)
		fb := NewFeedback(events, FeedbackOptions{Now: func() time.Time { return fbNow }})
		resp, err := fb.Search(ctx, eng, Request{Query: q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := scoreOf(resp.Results, ran)
		return s
	}
	alone := score()
	const alike = "show me the details of the cluster ml-training now"
	agreed := score(fbEvents(alike, ran, 1, 1, fbNow)...)
	disputed := score(fbEvents(alike, "nimbus__delete_cluster", 1, 1, fbNow)...)
	if !(disputed < alone) {
		t.Errorf("Search(%q): %s scored %.4f after its runs and a look-alike's runs of delete_cluster, %.4f after its runs alone: want less", q, ran, disputed, alone)
	}
	if agreed < alone {
		t.Errorf("Search(%q): %s scored %.4f after its runs and a look-alike's runs of it, %.4f after its runs alone: want no less", q, ran, agreed, alone)
	}
}
