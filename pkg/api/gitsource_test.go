package api

import (
	"strings"
	"testing"
)

func TestGitSourceValidate(t *testing.T) {
	ok := func() GitSource {
		g := GitSource{Metadata: ObjectMeta{Name: "fleet"}, Spec: GitSourceSpec{Repo: "https://git.example.com/fleet.git", Branch: "main", Path: "clusters"}}
		g.Default()
		return g
	}
	tests := []struct {
		name string
		edit func(*GitSource)
		path string
	}{
		{"valid", func(*GitSource) {}, ""},
		{"local path", func(g *GitSource) { g.Spec.Repo = "/srv/git/fleet" }, ""},
		{"relative path", func(g *GitSource) { g.Spec.Repo = "fleet" }, "spec.repo"},
		{"option-like repo", func(g *GitSource) { g.Spec.Repo = "--upload-pack=x" }, "spec.repo"},
		{"repo at the bound", func(g *GitSource) { g.Spec.Repo = "/" + strings.Repeat("a", MaxGitRepoLen-1) }, ""},
		{"repo over the bound", func(g *GitSource) { g.Spec.Repo = "/" + strings.Repeat("a", MaxGitRepoLen) }, "spec.repo"},
		{"branch at the bound", func(g *GitSource) { g.Spec.Branch = strings.Repeat("b", MaxGitBranchLen) }, ""},
		{"branch over the bound", func(g *GitSource) { g.Spec.Branch = strings.Repeat("b", MaxGitBranchLen+1) }, "spec.branch"},
		{"branch with ..", func(g *GitSource) { g.Spec.Branch = "a..b" }, "spec.branch"},
		{"path escapes", func(g *GitSource) { g.Spec.Path = "../etc" }, "spec.path"},
		{"path over the bound", func(g *GitSource) { g.Spec.Path = strings.Repeat("p", MaxGitPathLen+1) }, "spec.path"},
		{"interval at the minimum", func(g *GitSource) { g.Spec.Interval = "10s" }, ""},
		{"interval under the minimum", func(g *GitSource) { g.Spec.Interval = "9s" }, "spec.interval"},
		{"interval at the maximum", func(g *GitSource) { g.Spec.Interval = "24h" }, ""},
		{"interval over the maximum", func(g *GitSource) { g.Spec.Interval = "25h" }, "spec.interval"},
		{"policy", func(g *GitSource) { g.Spec.Policy = "yolo" }, "spec.policy"},
		{"max disruption", func(g *GitSource) { g.Spec.MaxDisruption = "some" }, "spec.maxDisruption"},
		{"name", func(g *GitSource) { g.Metadata.Name = "Fleet" }, "metadata.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := ok()
			tt.edit(&g)
			is := g.Validate()
			if tt.path == "" && is.HasErrors() {
				t.Fatalf("unexpected issues: %v", is)
			}
			if tt.path != "" && (len(is) == 0 || is[0].Path != tt.path) {
				t.Fatalf("issues %v, want one at %s", is, tt.path)
			}
		})
	}
}

func TestDisruptionRankOrdersLevels(t *testing.T) {
	if DisruptionRank("none") != 0 || DisruptionRank(GitDisruptionDelete) != len(GitDisruptions())-1 || DisruptionRank("x") != -1 {
		t.Fatal("disruption ranks are not in order")
	}
}
