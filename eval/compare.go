package eval

import (
	"math/rand"
)

// Comparison is one run's difference from the baseline on one metric,
// with a paired bootstrap 95% confidence interval over queries.
type Comparison struct {
	Run      string  `json:"run"`
	Baseline string  `json:"baseline"`
	Metric   string  `json:"metric"`
	Diff     float64 `json:"diff"`
	Low      float64 `json:"ci_low"`
	High     float64 `json:"ci_high"`
	// Significant is true when the interval excludes zero.
	Significant bool `json:"significant"`
}

// BootstrapSamples is the number of resamples behind each interval.
const BootstrapSamples = 2000

// Compare fills each dataset report's Comparisons: every run against the
// run at index baseline, for every metric. Resampling uses a fixed seed, so
// reports are reproducible.
func Compare(rep *Report, baseline int, metrics []string) {
	for _, d := range rep.Datasets {
		d.Comparisons = nil
		if baseline < 0 || baseline >= len(d.Runs) {
			continue
		}
		base := d.Runs[baseline]
		for ri, run := range d.Runs {
			if ri == baseline {
				continue
			}
			for _, m := range metrics {
				diffs := make([]float64, len(run.perQuery))
				for i := range diffs {
					diffs[i] = run.perQuery[i].metrics[m] - base.perQuery[i].metrics[m]
				}
				mean, lo, hi := PairedBootstrap(diffs, BootstrapSamples, 1)
				d.Comparisons = append(d.Comparisons, Comparison{
					Run: run.RunName(), Baseline: base.RunName(), Metric: m,
					Diff: round4(mean), Low: round4(lo), High: round4(hi),
					Significant: lo > 0 || hi < 0,
				})
			}
		}
	}
}

// PairedBootstrap returns the mean of per-query differences and the 2.5th
// and 97.5th percentiles of the means of samples resamples (with
// replacement) of them.
func PairedBootstrap(diffs []float64, samples int, seed int64) (mean, low, high float64) {
	n := len(diffs)
	if n == 0 {
		return 0, 0, 0
	}
	for _, d := range diffs {
		mean += d
	}
	mean /= float64(n)
	r := rand.New(rand.NewSource(seed))
	means := make([]float64, samples)
	for s := range means {
		sum := 0.0
		for i := 0; i < n; i++ {
			sum += diffs[r.Intn(n)]
		}
		means[s] = sum / float64(n)
	}
	return mean, percentile(means, 2.5), percentile(means, 97.5)
}
