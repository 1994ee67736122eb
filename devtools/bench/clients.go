package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// httpClient talks to loopback servers only, with enough idle connections
// for the concurrency scenario's clients.
var httpClient = &http.Client{Transport: &http.Transport{
	Proxy:               nil,
	MaxIdleConns:        256,
	MaxIdleConnsPerHost: 256,
	IdleConnTimeout:     30 * time.Second,
	DisableCompression:  true,
}}

// mcpClient calls vaultask's MCP tools over streamable HTTP.
type mcpClient struct {
	url     string
	session string
}

func newMCP(ctx context.Context, base string) (*mcpClient, error) {
	c := &mcpClient{url: base + "/mcp"}
	hdr, _, err := c.call(ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "vaultask-bench", "version": "1"}})
	if err != nil {
		return nil, err
	}
	c.session = hdr.Get("Mcp-Session-Id")
	return c, nil
}

// call sends one JSON-RPC request and returns the result's raw JSON, read
// from a JSON or an event-stream answer.
func (c *mcpClient) call(ctx context.Context, method string, params any) (http.Header, json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("mcp %s: %s: %s", method, resp.Status, raw)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.SplitSeq(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				raw = []byte(d)
			}
		}
	}
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, nil, fmt.Errorf("mcp %s: %w: %s", method, err, raw)
	}
	if out.Error != nil {
		return nil, nil, fmt.Errorf("mcp %s: %s", method, out.Error.Message)
	}
	return resp.Header, out.Result, nil
}

// searchHit is what vault_search says of one passage.
type searchHit struct {
	Path       string   `json:"path"`
	Snippet    string   `json:"snippet"`
	Provenance []string `json:"provenance"`
}

// search calls vault_search with the whole vault in scope.
func (c *mcpClient) search(ctx context.Context, query string, k int) ([]searchHit, error) {
	_, raw, err := c.call(ctx, "tools/call", map[string]any{"name": "vault_search",
		"arguments": map[string]any{"query": query, "k": k, "allow_web": false}})
	if err != nil {
		return nil, err
	}
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Hits []searchHit `json:"hits"`
		} `json:"structuredContent"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	if res.IsError {
		msg := ""
		if len(res.Content) > 0 {
			msg = res.Content[0].Text
		}
		return nil, fmt.Errorf("vault_search: %s", msg)
	}
	return res.StructuredContent.Hits, nil
}

// found reports whether hits has a passage of path found by the search arm
// named by from ("fts" or "vector").
func found(hits []searchHit, path, from string) bool {
	for _, h := range hits {
		if h.Path != path {
			continue
		}
		for _, p := range h.Provenance {
			if p == from {
				return true
			}
		}
	}
	return false
}

// errNoToken is a stream that ended without the expected first word.
var errNoToken = errors.New("the stream ended without the first word")

// streamChat sends a streaming chat completion to base (an API root ending
// in /v1) and returns the time to the first content delta holding first,
// and whether the stream ended with [DONE].
func streamChat(ctx context.Context, base, model, question, first string) (ttft time.Duration, err error) {
	body, _ := json.Marshal(map[string]any{"model": model, "stream": true,
		"messages": []map[string]string{{"role": "user", "content": question}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("chat: %s: %s", resp.Status, b)
	}
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if ttft == 0 && strings.HasPrefix(line, "data: {") && strings.Contains(line, first) {
			ttft = time.Since(start)
		}
		if line == "data: [DONE]" {
			done = true
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if ttft == 0 {
		return 0, errNoToken
	}
	if !done {
		return 0, errors.New("chat: the stream ended without [DONE]")
	}
	return ttft, nil
}
