package rag

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// armsSearcher is a real store whose two search arms first run a hook, to
// fail, panic or wait for the other arm to cancel them.
type armsSearcher struct {
	*index.Search
	fts, vector func(ctx context.Context) error
}

func (a *armsSearcher) SearchFTS(ctx context.Context, text string, k int, scope vault.Scope, w vault.FieldWeights) ([]vault.Chunk, error) {
	if err := a.fts(ctx); err != nil {
		return nil, err
	}
	return a.Search.SearchFTS(ctx, text, k, scope, w)
}

func (a *armsSearcher) SearchVector(ctx context.Context, vec vault.QueryVector, k int, scope vault.Scope) ([]vault.Chunk, error) {
	if err := a.vector(ctx); err != nil {
		return nil, err
	}
	return a.Search.SearchVector(ctx, vec, k, scope)
}

// errDisk is an arm's own failure.
var errDisk = errors.New("disk I/O error")

// armCancelWait bounds how long an arm waits to be cancelled; far longer
// than any test here takes when it is.
const armCancelWait = 10 * time.Second

// A failed arm is the question's error, whichever arm it is, and cancels
// the other; a panic in an arm is an error naming the arm, not the end of
// the process.
func TestArmFailures(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	ok := func(context.Context) error { return nil }
	fail := func(context.Context) error { return errDisk }
	for _, tc := range []struct {
		name        string
		fts, vector func(context.Context) error
		// waits names the arm that waits to be cancelled by the other's
		// failure, "" for none.
		waits string
		want  string // the error's text holds it
	}{
		{name: "full text fails", fts: fail, waits: "vector", want: errDisk.Error()},
		{name: "vector search fails", vector: fail, waits: "fts", want: errDisk.Error()},
		{name: "full text panics", fts: func(context.Context) error { panic("fts boom") }, vector: ok, want: "full-text search: panic: fts boom"},
		{name: "vector search panics", fts: ok, vector: func(context.Context) error { panic("vector boom") }, want: "vector search: panic: vector boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cancelled := make(chan bool, 1)
			wait := func(ctx context.Context) error {
				select {
				case <-ctx.Done():
					cancelled <- true
					return ctx.Err()
				case <-time.After(armCancelWait):
					cancelled <- false
					return nil
				}
			}
			s := &armsSearcher{Search: store.Search(), fts: tc.fts, vector: tc.vector}
			switch tc.waits {
			case "fts":
				s.fts = wait
			case "vector":
				s.vector = wait
			}
			p := mustPipeline(t, Options{Searcher: s, Embedder: &bagEmbedder{}})
			_, err := p.Retrieve(context.Background(), Question{Text: "quasar", AllowWeb: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, context.Canceled) {
				t.Fatalf("Retrieve = %v, want an error holding %q (the failed arm's, not the cancelled one's)", err, tc.want)
			}
			if tc.waits != "" && !<-cancelled {
				t.Errorf("the %s arm ran on after the other arm failed", tc.waits)
			}
		})
	}
}
