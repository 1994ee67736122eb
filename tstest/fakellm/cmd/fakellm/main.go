package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vaultask/vaultask/tstest/fakellm"
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
