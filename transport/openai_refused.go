package transport

import (
	"encoding/json"
	"slices"
)

// refuseOutputs refuses, naming the field, what asks for a reply vaultask
// never gives: a function call by the legacy functions and function_call
// (the deprecated form of tools, which no client sends by default: one
// that still sends it expects the calls), token log probabilities, and
// audio. Their neutral values ("none" or "auto", false, 0, ["text"], null,
// []) are accepted.
func refuseOutputs(req chatRequest) error {
	var fns []json.RawMessage
	if given(req.Functions) && (json.Unmarshal(req.Functions, &fns) != nil || len(fns) > 0) {
		return badRequest("functions", "functions %s asks for function calls, which vaultask never makes: leave it out (it is the deprecated form of tools)", clip(req.Functions))
	}
	if given(req.FunctionCall) {
		var choice string
		if json.Unmarshal(req.FunctionCall, &choice) != nil || choice != "auto" && choice != "none" {
			return badRequest("function_call", "function_call %s requires a function call, which vaultask never makes: send \"auto\" or \"none\", or leave it out", clip(req.FunctionCall))
		}
	}
	if req.Logprobs != nil && *req.Logprobs {
		return badRequest("logprobs", "logprobs is true: vaultask returns no token log probabilities (false, or leave it out)")
	}
	if req.TopLogprobs != nil && *req.TopLogprobs != 0 {
		return badRequest("top_logprobs", "top_logprobs is %d: vaultask returns no token log probabilities (0, or leave it out)", *req.TopLogprobs)
	}
	if i := slices.IndexFunc(req.Modalities, func(m string) bool { return m != "text" }); i >= 0 {
		return badRequest("modalities", "modalities holds %q: vaultask answers in text only ([\"text\"], or leave it out)", req.Modalities[i])
	}
	if given(req.Audio) {
		return badRequest("audio", "audio %s asks for a spoken answer: vaultask answers in text only (leave it out)", clip(req.Audio))
	}
	return nil
}

// clip is a field's JSON as an error message quotes it: at most 200 bytes,
// so that a large value does not fill the message.
func clip(raw json.RawMessage) string {
	if len(raw) <= 200 {
		return string(raw)
	}
	return string(raw[:200]) + "…"
}
