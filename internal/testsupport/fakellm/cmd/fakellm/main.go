// Command fakellm runs the fake model server of package fakellm on loopback
// until interrupted, so that `vaultask eval retrieval` and `vaultask ask`
// can be pointed at it (--rerank-url, models.rerank_base_url) to measure
// the rerank path's plumbing, cost and fallback without a model. On exit
// it prints what the rerank endpoint received.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vaultask/vaultask/internal/testsupport/fakellm"
)

func main() {
	delay := flag.Duration("rerank-delay", 0, "hold each rerank reply back this long: a model too slow for its budget")
	flag.Parse()
	fake := fakellm.New()
	fake.RerankDelay = *delay
	fmt.Printf("fakellm: API root %s (POST /chat/completions, /rerank: word overlap)\n", fake.URL())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fake.Close()
	reqs := fake.RerankRequests()
	docs, bytes := 0, 0
	for _, r := range reqs {
		docs += len(r.Documents)
		bytes += r.Bytes
	}
	fmt.Printf("fakellm: %d rerank requests, %d documents, %d request bytes (the latest %d requests at most)\n", len(reqs), docs, bytes, fakellm.Kept)
}
