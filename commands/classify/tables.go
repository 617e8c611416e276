package classify

// Marker tables. Each is data: lower-case phrases (see phrases.go for the
// `\b` syntax), with the provider that sends them and the source of the rule.
// "ref" is shared/spec/openclaw-reference.md; "seed 000" is the OpenClaw
// model-failover doc; "fledger" marks our additions, each with the real
// error (vector id) that motivated it. Order inside a table only matters for
// which phrase is reported as evidence.

// imageDimension: Anthropic's many-image size errors; handled by the image
// resizer, never a failover (ref §2.2 rule 1).
var imageDimensionRe = newPattern("image_dimension",
	`image dimensions? exceed|image exceeds \d+(?:\.\d+)? ?mb`,
	"image dimension", "image exceeds")

// unsupportedImage: a text-only model was sent an image; OpenRouter says
// "No endpoints found that support image input" (ref §2.2 rule 2).
var unsupportedImage = newTable("unsupported_image",
	"does not support image input", // OpenAI-compatible servers, Ollama
	"unsupported image input",      // vLLM
	// fledger (issue 17 second blind set): the same condition in other
	// servers' words — LM Studio "Model does not support images", "this
	// model does not support vision", "image input is not supported".
	"does not support images", "doesn't support images", "does not support image", "doesn't support image",
	"does not support vision", "doesn't support vision", "image input is not supported", "images are not supported",
	"vision is not supported",
)
var supportImageInput = newTable("support_image_input", "support image input")
var noEndpointsFound = newTable("no_endpoints_found", "no endpoints found") // OpenRouter

// claudeCLIAuth: the claude CLI backend's logged-out messages (ref §2.2 rule 3).
var claudeCLIAuth = newTable("claude_cli_auth",
	"not logged in · please run /login",
	"failed to authenticate: oauth session expired and could not be refreshed",
)

// transcriptInvalid: OpenClaw's own transcript validation; a format problem
// that must not cool credentials (ref §2.2 rule 4).
var transcriptInvalid = newTable("transcript_invalid", "invalid session transcript entry")

// sessionExpired: CLI backends (claude-cli, codex) lost the server-side
// session (ref §2.2 rule 5).
var sessionExpiredPhrases = newTable("session_expired",
	"no conversation found",
	"no such session",
	"invalid session",
	"session id not found",
	"conversation id not found",
)
var sessionExpiredRe = newPattern("session_expired",
	`\b(?:session|conversation)s?\b(?: id)?(?: [\w\-]+)?:? (?:was |is |has )?(?:not found|does not exist|expired|invalid)\b`,
	"session", "conversation").and("not found", "does not exist", "expired", "invalid")

// modelNotFound: live-model-errors (ref §2.2 rule 6).
var modelNotFoundPhrases = newTable("model_not_found",
	"no endpoints found for", // OpenRouter: no provider serves the slug
	"router not found",       // OpenRouter auto-router
	"unknown model",          // OpenAI-compatible servers
	"model_not_found",        // OpenAI code
	"model-not-found",
	"not_found_error",         // Anthropic type
	"not supported model",     // Chinese gateways' English
	"is not a valid model id", // OpenRouter
)
var notFound = newTable("not_found", "not found")
var http404 = newTable("404", `\b404\b`)
var modelNotFoundSeq = []finder{
	newSeq("model_within_60", 60, []string{"model"}, []string{"not found"}),
	newSeq("model_chatgpt_account", 80, []string{"model"}, []string{"is not supported when using"}, []string{"with a chatgpt account"}), // Codex on ChatGPT plans
	newSeq("models_slash_not_found", 80, []string{"models/"}, []string{" is not found"}),                                                // Gemini
	newSeq("model_deprecated", 120, []string{"model"}, []string{"deprecated"}, []string{"upgrade to", "transition to"}),                 // OpenRouter free-model retirements
	newSeq("stealth_model", 120, []string{"stealth model"}, []string{"find it here"}),                                                   // OpenRouter
}

// modelGone: retired, unknown or unreachable models in the providers' own
// words (fledger, issue 17 family 5): Groq "The model `x` has been
// decommissioned and is no longer supported", Azure "The API deployment for
// this resource does not exist" (its DeploymentNotFound), Together "Unable to access non-serverless
// model", DeepSeek "Model Not Exist", Gemini "the model name is invalid",
// Bedrock "Invocation of model ID … with on-demand throughput isn't
// supported" / "The provided model identifier is invalid".
var modelGone = []finder{
	newSeq("model_retired", 100, []string{"model"}, []string{"decommissioned", "no longer supported", "no longer available", "has been retired", "been shut down", "has been discontinued",
		"end of life", "end-of-life", "was retired", "is retired", "was removed", "has been removed", "was sunset", "has been sunset"}),
	// fledger (issue 17 third blind set): a retirement named by date or by
	// deprecation — Cloudflare "This model was deprecated on 2026-05-30.
	// Please use an alternative model" — not a deprecation warning about
	// a model that still answers ("… is deprecated and will be removed").
	unlessIn{newSeq("model_was_deprecated", 40, []string{"model"}, []string{"was deprecated", "has been deprecated", "been deprecated on", "deprecated on"}), willBeRemoved},
	// A model the provider does not serve: SambaNova "The requested model
	// (X) is not available on SambaNova Cloud", "model X is not available
	// on this server" — not a plan or tier that lacks it (billing), nor a
	// model temporarily down (overloaded).
	unlessIn{newSeq("model_not_served", 100, []string{"requested model", "the model", "this model", "model "},
		[]string{"is not available on", "isn't available on", "is not available in this", "is not available via", "is not served", "is not hosted"}), modelAvailabilityOther},
	// Replicate "The specified version does not exist (or perhaps you
	// don't have permission to use it?)": a model version, not an API
	// version.
	unlessIn{newSeq("model_version_missing", 24, []string{"version"}, []string{"does not exist", "doesn't exist", "not found", "is invalid"}), apiVersionWords},
	newSeq("model_not_exist", 40, []string{"model"}, []string{"not exist", "does not exist", "doesn't exist", "not exists"}),
	newSeq("model_not_supported", 30, []string{"model"}, []string{"is not supported", "isn't supported", "is unsupported"}),
	// OpenRouter: no provider serves the model under the key's routing or
	// privacy settings ("No endpoints found matching your data policy").
	newTable("no_endpoints_matching", "no endpoints found matching", "no endpoints available matching"),
	// A local server could not load the model (LM Studio "Failed to load the
	// model … Error loading model", llama.cpp "failed to load model").
	modelLoadFailed,
	// fledger (issue 17 second blind set): a model this server will not
	// load at all — Hugging Face serverless "The model … is too large to be
	// loaded automatically (16GB > 10GB)", "Model is too large to load onto
	// the free Inference API": the provider's policy for this model. Other
	// models on the same profile still work (POLICY: model_not_found is
	// model-scoped). A host short of memory is runtimeFailure.
	newSeq("model_too_large", 100, []string{"model"}, []string{"too large to be loaded", "too large to load", "too big to be loaded", "too big to load"}),
	// Azure's documented DeploymentNotFound message; a vaguer "The
	// deployment does not exist or you do not have access" stays
	// unclassified (OC-039, OpenClaw parity).
	newTable("model_gone", "api deployment for this resource does not exist", "non-serverless model", "model name is invalid", "invalid model name", "invalid model id",
		"invalid model identifier", "model identifier is invalid", "model_decommissioned", "unknown_model"),
	// fledger (issue 17 blind set): a deployment that does not exist, in
	// Azure's wordings ("The API deployment for the resource does not
	// exist", "The specified deployment 'x' was not found", "Deployment
	// gpt4 not found"). The ambiguous "The deployment does not exist or you
	// do not have access" (OC-039) stays unclassified: see modelNotFoundMatch.
	deploymentMissing,
	newTable("no_such_model", "no such model", "unsupported model", "model does not exist", "model not exist",
		"unable to access model",                  // Together "Unable to access model x. Please visit … to view the list of supported models"
		"无可用渠道", "没有可用渠道", "no available channel", // one-api/new-api: no channel serves the model in this group
		"模型不存在", "模型未找到", "找不到模型", "无效的模型", "不支持的模型", "不支持该模型", "模型已下线", "模型已停用"), // Zhipu 1211 "模型不存在"
	newSeq("model_cn_missing", 48, []string{"模型"}, []string{"不存在", "未找到", "找不到", "已下线", "已停用"}),
	newSeq("dedicated_endpoint_stopped", 80, []string{"dedicated endpoint"}, []string{"not running", "is stopped", "not started"}),
	newPattern("on_demand_unsupported", `on-demand throughput (?:isn(?:'|’)t|is not) supported|(?:doesn(?:'|’)t|does not) support on-demand throughput`, "on-demand throughput"),
}

// modelLoadFailed: a local server could not load the model (LM Studio
// "Failed to load the model … Error loading model", llama.cpp "failed to
// load model"); with crash or out-of-memory evidence it is runtimeFailure.
var modelLoadFailed finder = newSeq("model_load_failed", 12, []string{"failed to load", "error loading", "unable to load", "could not load"}, []string{"model"})

var deploymentMissing finder = newShape("deployment_missing", []string{"deployment"}, 0, "",
	72, `deployment\b(?:[^.\n]|\.\w){0,48}?\b(?:does not exist|doesn(?:'|’)t exist|not exist|not found|was not found|could not be found|cannot be found|is not found)\b`)

// willBeRemoved: a deprecation notice for a model that still answers.
var willBeRemoved = newTable("will_be_removed", "will be removed", "will be retired", "will be deprecated", "will stop", "scheduled for")

// modelAvailabilityOther: "not available" that is a plan, tier, region or
// passing state rather than a model the provider does not serve.
var modelAvailabilityOther = newTable("model_availability_other", "your plan", "current plan", "your tier", "your subscription",
	"free tier", "your region", "your country", "temporarily", "at the moment", "right now", "currently not available", "try again")

// apiVersionWords: an API version (Azure api-version), a format problem.
var apiVersionWords = newTable("api_version_words", "api version", "api-version", "api_version", "apiversion")

var modelColon = newTable("model_colon", "model: ") // + "not found": Anthropic not_found_error "model: claude-…"
var invalidModel = newTable("invalid_model", `invalid model\b`)
var invalidModelReference = newTable("invalid_model_reference", "invalid model reference")
var modelWord = newTable("model_word", "model")
var doesNotExist = newTable("does_not_exist", "does not exist")
var selectedModel = newTable("selected_model", "selected model")

// legacyProvider: provider-patterns.tables.ts (ref §2.2 rule 7).
var workersAIQuota = newSeq("workers_ai_quota", 80, []string{"workers_ai"}, []string{"quota limit exceeded"})
var modelNotReady = newTable("model_not_ready", "modelnotreadyexception") // Bedrock: model still loading
var modelDeactivated = newTable("model_deactivated",
	"model_deactivated", "model_is_deactivated", "model has been deactivated") // OpenAI retired models

// contextOverflow: the explicit overflow list ([Apr] errors.ts, ref §2.5
// "Context overflow"), plus the 2026.9.6 additions seen in the vectors.
var contextOverflowPhrases = newTable("context_overflow",
	"request_too_large",                             // Anthropic 413 type
	"request exceeds the maximum size",              // Anthropic
	"context length exceeded",                       // generic
	"context_length_exceeded",                       // OpenAI code
	"maximum context length",                        // OpenAI "This model's maximum context length is …"
	"prompt is too long",                            // Anthropic, Bedrock Claude
	"prompt too long",                               // generic
	"exceeds model context window",                  // Anthropic "Request size exceeds model context window"
	"model token limit",                             // generic
	"context overflow:",                             // OpenClaw's own wrapper
	"exceed context limit",                          // generic
	"exceeds the model's maximum context",           // generic
	"context_window_exceeded",                       // gateways
	"contextwindowexceeded",                         // fledger: LiteLLM ContextWindowExceededError
	"context window exceeded",                       // OC-139: "Context window exceeded: too many tokens per request." (2026.9.6)
	"input is too long",                             // fledger (RE-051, RE-052): Bedrock "Input is too long for requested model."
	"input too long for the model",                  // seed 000 "Does not continue on"
	"exceeds the maximum number of tokens",          // fledger (RE-096..098): Gemini "The input token count (N) exceeds the maximum number of tokens allowed (M)."
	"maximum number of input tokens",                // seed 000: "input token count exceeds the maximum number of input tokens"
	"上下文过长", "上下文超出", "上下文长度超", "超出最大上下文", "请压缩上下文", // CJK gateways
	"输入长度超", "输入过长", "输入超长", "超出最大输入", "超过最大输入", "超出上下文", "超过上下文", // fledger: Chinese providers' input-length wording
)
var contextOverflowSeq = []finder{
	newSeq("invalid_argument_max_tokens", 200, []string{"invalid_argument"}, []string{"maximum number of tokens"}), // Gemini/Vertex
	newSeq("input_exceeds_max_tokens", 40, []string{"input exceeds"}, []string{"maximum number of tokens"}),
	newSeq("request_size_context", 40, []string{"request size exceeds"}, []string{"context window", "context length"}), // Anthropic
	newSeq("max_tokens_exceed_context", 80, []string{"max_tokens"}, []string{"exceed"}, []string{"context"}),
	newSeq("input_length_exceed_context", 80, []string{"input length"}, []string{"exceed"}, []string{"context"}),
	newSeq("413_too_large", 80, []string{`\b413\b`}, []string{"too large"}), // Groq, proxies
	// fledger (issue 17 fresh-user pass): a token count over the model's
	// limit in Chinese — "请求的token数超过了模型的最大限制", "输入token数超出
	// 模型最大长度" — but not a per-minute or per-day quota (频率, 每分钟 …).
	unlessIn{newSeq("cjk_token_count_exceeds", 24, []string{"token数", "token 数", "tokens数", "token数量", "令牌数", "字符数", "文本长度", "提示词长度"},
		[]string{"超过", "超出", "大于", "超限"}), cjkRateWords},
	// fledger (RE-054): Bedrock InvokeModel body over 25 MB: "Value at 'body'
	// failed to satisfy constraint: Member must have length less than or equal to 25000000".
	newSeq("bedrock_body_length", 8, []string{"value at 'body' failed to satisfy constraint"}, []string{"member must have length less than or equal to"}),
}

// cjkRateWords: a Chinese count that is a rate or a quota window.
var cjkRateWords = newTable("cjk_rate_words", "每分钟", "每秒", "每天", "每日", "每小时", "频率", "速率", "并发", "tpm", "rpm", "额度")

// contextOverflowShapes: the structures providers build overflow errors
// from (fledger, issue 17 family 1), instead of one phrase per provider:
//
//   - a count that exceeds a limit: "request (4390 tokens) exceeds the
//     available context size (4096 tokens)", "Prompt tokens (N) exceeds
//     context size (M)", "Requested tokens (2285) exceed context window of
//     2048";
//   - a subject that exceeds a limit: "Input tokens exceed the configured
//     limit of 272000", "number of input tokens … exceeded
//     max_prompt_tokens", "Requested token count exceeds the model's
//     maximum";
//   - a context that was exceeded: "Context size has been exceeded",
//     "… exceeds the available context size";
//   - a bound on the input: SiliconFlow 20015 "length of prompt_tokens
//     (68957) must be less than max_seq_len (65536)";
//   - a sum bound: TGI "`inputs` tokens + `max_new_tokens` must be <= 1512",
//     Together "Input token count + max_tokens parameter must be less than
//     the context length", TGI "`inputs` must have less than 1024 tokens";
//   - llama.cpp / LM Studio: "n_keep (15028) >= n_ctx (7424)", "keep the
//     first 111490 tokens when context the overflows", "context length of
//     only 32768 tokens";
//   - an input-length range: DashScope "Range of input length should be
//     [1, 30720]" (an output range such as "Range of max_tokens should be
//     [1, 2000]" is a format error, not an overflow).
//
// A match that is about output tokens (max_tokens, max_new_tokens,
// completion, output, generation) alone is not an overflow (see
// overflowShape).
var contextOverflowShapes = []finder{
	// "request (4390 tokens) exceeds the available context size", "Prompt
	// tokens (N) exceeds context size (M)", "Requested tokens (2285) exceed
	// context window of 2048", "… 9000 tokens is greater than the maximum".
	newShape("count_exceeds_limit", overflowVerbs, 48,
		`\d[\d,]*\s*(?:input |prompt |total )?tokens?\b\)?[^.\n]{0,12}|(?:^|[^_a-z])tokens?\s*\(\d[\d,]*\)\s*`,
		96, `(?:`+overflowVerbAlt+`)\b[^.\n]*?\b(?:limit|maximum|max|context|window|n_ctx|allowed|capacity)`).and("token").leftWith("token"),
	// "Input tokens exceed the configured limit of 272000", "number of input
	// tokens … exceeded max_prompt_tokens", "prompt length is too long for
	// the model's maximum".
	//
	// fledger (issue 17 second blind set): the subject may carry its count
	// in parentheses — vLLM "The decoder prompt (length 9000) is longer
	// than the maximum model length of 8192", "Input prompt (5120 tokens) is
	// too long and exceeds limit", "The prompt (total length N) is too long
	// to fit into the model (context length M)" —, be a sequence length
	// (transformers "Token indices sequence length is longer than the
	// specified maximum sequence length") or a number of tokens (Cohere
	// "total number of tokens in the prompt cannot exceed 4081 - received
	// 4431", LM Studio "The number of tokens to keep from the initial prompt
	// is greater than the context length"); the limit may be the bare
	// number after the verb ("cannot exceed 4081").
	newShape("subject_exceeds_limit", []string{"exceed", "greater than", "more than", "larger than", "longer than", "too long", "too large"}, 64,
		`\b(?:input|prompt|request|requested|total|context|message|messages|conversation|sequence)\s*(?:\(\s*(?:total\s+)?(?:length|tokens?|size)?[\s:=]*\d[\d,]*\s*(?:tokens?)?\s*\)|\s(?:total\s+)?(?:tokens?|token count|length|size|text)\b)[^.\n]*|\bnumber of (?:input |prompt |text |total )?tokens\b[^.\n]*`,
		96, `(?:`+overflowVerbAlt+`|too long|too large)\b(?:[^.\n]*?\b(?:limit|maximum|max|context|window|n_ctx|allowed|configured)|\s+(?:the\s+)?\d)`).
		and("input", "prompt", "request", "total", "context", "message", "conversation", "sequence", "number of").
		leftWith("input", "prompt", "request", "total", "context", "message", "conversation", "sequence", "number of"),
	// Cohere "too many tokens: size limit exceeded by 1132 tokens": a token
	// limit overshot by a count.
	newShape("limit_exceeded_by", []string{"exceeded by"}, 24, `\b(?:size|context|length|token|input|prompt|window)\s+limit\s+`,
		32, `exceeded by \d[\d,]*\s*tokens?\b`).leftWith("limit"),
	// The input is too long or too large, whatever the limit is called:
	// Claude Code "Conversation too long", Cursor "Your conversation is too
	// long", DashScope "The input length is too long", "The prompt is too
	// large for the model's context window". Not a message or an image
	// (a chat channel's "message is too long" is no model window).
	newShape("input_too_long", []string{"too long", "too large"},
		40, `\b(?:conversation|context|input|prompt|request|history|chat|transcript)(?:\s+(?:length|size|tokens?|token count|text))?\s+(?:(?:is|are|was|has become|got|grew)\s+)?(?:much\s+|way\s+|far\s+)?`,
		12, `too (?:long|large)\b`).leftWith("conversation", "context", "input", "prompt", "request", "history", "chat", "transcript"),
	// Codex "ran out of room in the model's context window".
	newSeq("out_of_room_context", 40, []string{"ran out of room", "out of room", "no room left", "not enough room", "ran out of space", "run out of space"},
		[]string{"context"}),
	// A request count against a maximum: "Requested 9000 tokens, but the
	// model supports a maximum of 8192 tokens".
	newShape("requested_but_max", []string{"requested"}, 0, "",
		140, `requested\s+(?:about\s+|~)?\d[\d,]*\s*(?:input\s+|prompt\s+)?tokens?\b[^\n]{0,60}?\b(?:but|however|while|exceed\w*)\b[^\n]{0,60}?\b(?:maximum|max|limit|context|only)\b`),
	// A request body over the provider's size limit, like Bedrock's 25 MB
	// body (RE-054): Gemini "Request payload size exceeds the limit:
	// 20971520 bytes", 413 "Payload Too Large", "Request Entity Too Large".
	newSeq("payload_size", 24, []string{"payload size", "request size", "body size", "request payload", "request body", "request entity"},
		[]string{"exceeds", "exceeded", "too large", "is larger than", "over the limit"}),
	// xAI "This model's maximum prompt length is 131072 but the request
	// contains 136973 tokens", "The maximum input length is 32000 tokens,
	// but the request contains 35210 tokens": a maximum length, then a
	// contrast and the request's own count.
	newShape("max_length_but_count", []string{"maximum", "max "}, 0, "",
		160, `max(?:imum)?\s+(?:prompt |input |context |sequence |model |token |total )?(?:length|size|window)\b[^\n]{0,60}?\b(?:but|however|whereas|while)\b[^\n]{0,60}?\d[\d,]*\s*(?:input |prompt )?tokens?\b`).
		and("but", "however", "whereas", "while"),
	// "Context size has been exceeded", "context window overflowed".
	newShape("context_exceeded", []string{"context size", "context length", "context window", "context limit"}, 0, "",
		48, `context (?:size|length|window|limit)\b[^.\n]*?\b(?:has been |was |is )?(?:exceeded|overflowed?)\b`),
	// "… exceeds the available context size", "exceeding the model's context window".
	newShape("exceeds_context", []string{"context size", "context length", "context window", "context limit"}, 48,
		`\bexceed(?:s|ed|ing)?\b[^.\n]*`,
		24, `context (?:size|length|window|limit)\b`).leftWith("exceed"),
	// SiliconFlow 20015 "length of prompt_tokens (68957) must be less than
	// max_seq_len (65536)"; "input tokens must be at most the context limit".
	newShape("subject_bound", []string{"must be", "should be", "needs to be"}, 56,
		`\b(?:input|prompt|request|total|context)[\s_](?:tokens?|token count|length|size)\b[^.\n]*`,
		80, `(?:must|should|needs to) be\s*(?:<=?|less than|at most|smaller than|no more than|fewer than)[^.\n]*?\b(?:max|limit|context|window|n_ctx|seq_len|allowed)`).
		and("input", "prompt", "request", "total", "context").leftWith("input", "prompt", "request", "total", "context"),
	// TGI "`inputs` tokens + `max_new_tokens` must be <= 1512", Together
	// "Input token count + max_tokens parameter must be less than the
	// context length".
	newShape("sum_bound", []string{"must be", "should be"}, 72,
		`\btokens?\b[^.\n+]*\+[^.\n]*`,
		32, `(?:must|should) be\s*(?:<=?|less than|at most|smaller than|no more than)`).and("token").leftWith("+"),
	// TGI "`inputs` must have less than 1024 tokens".
	newShape("must_have_fewer_tokens", []string{"must have less than", "must have fewer than"}, 0, "",
		48, `must have (?:less|fewer) than \d[\d,]* (?:input )?tokens\b`),
	// llama.cpp / LM Studio: "n_keep (15028) >= n_ctx (7424)", "keep the
	// first 111490 tokens when context the overflows", "context length of
	// only 32768 tokens".
	newShape("llamacpp_n_keep", []string{"n_keep"}, 0, "", 40, `n_keep\W{0,3}\d*\W{0,3}>=?\s*n_ctx\b`),
	newShape("llamacpp_keep_first", []string{"keep the first"}, 0, "", 80, `keep the first \d[\d,]* tokens when\b[^.\n]*?\boverflows?\b`),
	newShape("llamacpp_only", []string{"context length of only"}, 0, "", 48, `context length of only \d[\d,]* tokens\b`),
	// DashScope "Range of input length should be [1, 30720]".
	newShape("input_length_range", []string{"input length", "prompt length", "text length", "message length", "messages length"}, 0, "",
		64, `(?:input|prompt|text|messages?) length\b[^.\n]*?\[\s*\d+\s*,\s*\d+\s*\]`),
}

// overflowVerbs anchor the count shape; overflowVerbAlt is the same set as
// a regex alternation.
var overflowVerbs = []string{"exceed", "greater than", "more than", "larger than", "longer than"}

const overflowVerbAlt = `exceed(?:s|ed|ing)?|greater than|more than|larger than|longer than`

// ollamaOverflow: the Ollama plugin's overflow text (ref §2.6).
var ollamaOverflow = []finder{
	newSeq("ollama_overflow", 120, []string{"ollama"}, []string{"context length", "too many tokens", "context window"}),
	newSeq("ollama_truncating", 120, []string{"truncating input"}, []string{"too long"}),
}

// assistantOverflow: the looser assistant-error overflow pattern, used
// after the rate-limit and server tables have had their say (ref §2.2 rule
// 27; the @openclaw/ai table was not extracted, this is our reading).
var assistantOverflow = []finder{
	newSeq("assistant_overflow", 60, []string{"context window", "context length", "context limit", "token limit"}, []string{"exceed", "overflow", "too long", "too large", "reached"}),
	newSeq("exceeds_context", 24, []string{"exceed"}, []string{"context window", "context length", "context limit", "token limit"}),
}

// tpmHint: tokens-per-minute/day wording. A TPM hint is never overflow unless
// it states a request-size ceiling (ref §2.5; POLICY "request-size ceiling").
var tpmHint = newTable("tpm_hint",
	`\btpm\b`, "tokens per minute", "tokens per min", `\btpd\b`, "tokens per day")

// reasoningConstraint: "reasoning is mandatory" errors are not overflow (ref §2.5).
var reasoningConstraint = []finder{
	newTable("reasoning_constraint", "reasoning is mandatory", "reasoning is required", "requires reasoning"),
	newSeq("reasoning_not_disabled", 60, []string{"reasoning"}, []string{"cannot be disabled"}),
}

// replayInvalid: a transcript the provider cannot replay (ref §2.2 rule 9).
var replayInvalid = newTable("replay_invalid",
	"incorrect role information",                       // Gemini
	"roles must alternate",                             // Anthropic, Mistral
	"input item id does not belong to this connection", // OpenAI Responses websocket
	"must be followed by tool messages",                // fledger (RE-143..145): OpenAI/DeepSeek/Qwen orphaned tool_calls
	"tool_use ids were found without",                  // fledger (RE-157): Anthropic orphaned tool_use
	// fledger (issue 17 second blind set): tool calls and their results
	// that do not pair up, in each API's words — OpenAI Responses "No tool
	// call found for function call output with call_id …", "No tool output
	// found for function call …", "messages with role 'tool' must be a
	// response to a preceeding message with 'tool_calls'", Gemini "the
	// number of function response parts is equal to the number of function
	// call parts", "function call turn comes immediately after a user
	// turn", Mistral "Not the same number of function calls and responses";
	// replayed reasoning items and thinking blocks (OpenAI "Items are not
	// persisted when `store` is set to false", Anthropic "a final
	// `assistant` message must start with a thinking block", "`thinking`
	// … blocks in the latest assistant message cannot be modified").
	"no tool call found for function call output", "no tool output found for function call", "must be a response to a preceeding message",
	"must be a response to a preceding message", "number of function response parts", "function call turn comes immediately after",
	"same number of function calls and responses", "items are not persisted when", "must start with a thinking block",
	"expected `thinking` or `redacted_thinking`", "blocks in the latest assistant message cannot be modified",
)
var replayInvalidSeq = []finder{
	newSeq("previous_response_id", 80, []string{"previous_response_id"}, []string{"invalid", "unknown", "not found", "does not exist", "expired", "mismatch"}), // OpenAI Responses
	newSeq("tool_input_missing", 60, []string{"tool_use.input", "tool_use.arguments", "tool_call.input", "tool_call.arguments", "tool_calls.input", "tool_calls.arguments"}, []string{"missing", "required"}),
	// fledger (issue 17 second blind set): the conversation's role order,
	// which every chat API and chat template checks — Perplexity "user or
	// tool message(s) should alternate with assistant message(s)", Anthropic
	// "roles must alternate between "user" and "assistant"", Gemini "ensure
	// that multiturn requests alternate between user and model", HF
	// templates "Conversation roles must alternate user/assistant/…",
	// DeepSeek "does not support successive user or assistant messages",
	// Mistral "Expected last role User or Tool … but got assistant",
	// "Unexpected role 'system' after role 'assistant'", Anthropic "first
	// message must use the "user" role", "Last message must have role
	// `user`".
	newShape("roles_alternate", []string{"alternate", "alternating"},
		64, `\b(?:roles?|messages?(?:\(s\))?|turns?|requests)\b[^\n]{0,48}$`,
		40, `alternat(?:e|ing)\b[^.\n]{0,24}?\b(?:user|assistant|model|human|tool)`).leftWith("role", "message", "turn", "request"),
	newSeq("successive_roles", 24, []string{"successive", "consecutive"},
		[]string{"user or assistant messages", "user messages", "assistant messages", "user message", "assistant message", "messages with the same role", "same role"}),
	newSeq("role_position", 40, []string{"first message", "last message", "final message"},
		[]string{"must", "should"}, []string{"role", "user", "assistant", "tool"}),
	newSeq("expected_role", 80, []string{"expected last role", "expected first role", "expected role"}, []string{"but got", "for serving", "got"}),
	newSeq("unexpected_role", 48, []string{"unexpected role", "invalid role order", "wrong role order"}, []string{"after", "role", "message"}),
	newSeq("must_start_with_user", 20, []string{"must start with", "must begin with", "should start with", "must be preceded by"},
		[]string{"user message", "user turn", "user role", "a message from the user", "a user"}),
	newTable("role_unsupported", "system role not supported", "system role is not supported", "only user and assistant roles are supported",
		"only user, assistant"),
	// llama.cpp "Cannot have 2 or more assistant messages at the end of the list".
	newSeq("repeated_role", 16, []string{"2 or more", "two or more", "more than one", "multiple"},
		[]string{"assistant messages at the end", "system messages", "consecutive"}),
	// Anthropic "Invalid `signature` in `thinking` block", either order.
	newPattern("thinking_signature", `thinking.{0,120}?(?:invalid\W{0,3}signature|signature\W{0,3}(?:is |has )?(?:invalid|expired)|expired\W{0,3}signature)|(?:invalid\W{0,3}signature|signature\W{0,3}(?:is |has )?(?:invalid|expired)|expired\W{0,3}signature).{0,120}?thinking`, "thinking").and("signature"),
}

// word402 and leading402Rest gate has402Marker (ref §2.4 "402 marker").
var word402 = newTable("402", `\b402\b`)
var leading402Rest = newTable("402_leading_rest", "payment required", "used up your points", "no available asset for api access")

// billing: credit and payment problems (ref §2.5 "billing"; seed 000
// "Billing disables").
var billingPhrases = newTable("billing",
	"payment required",                               // HTTP 402 reason phrase, Anthropic api_error "Payment required"
	"insufficient credits",                           // OpenRouter, generic
	"insufficient credit",                            //
	"used all available credits",                     // generic
	"insufficient_quota",                             // OpenAI code/type
	"insufficient quota",                             //
	"gousagelimiterror",                              // OpenCode Go plan
	"freeusagelimiterror",                            // OpenCode free plan
	"available balance",                              // generic
	"out of budget",                                  // LiteLLM virtual keys
	"credit balance",                                 // Anthropic "Your credit balance is too low"
	"plans & billing",                                // Anthropic
	"insufficient_balance",                           // DeepSeek code
	"insufficient balance",                           // DeepSeek "Insufficient Balance"
	"insufficient usd or diem balance",               // Venice
	"requires more credits",                          // OpenRouter "This request requires more credits"
	"require more credits",                           //
	"out of extra usage",                             // Anthropic subscription
	"draw from your extra usage",                     // Anthropic subscription
	"extra usage is required",                        // Anthropic long-context on subscription
	"does not have a valid coding plan subscription", // Z.ai/GLM coding plan
	`"code":"invalidsubscription"`,                   // Volcengine Ark
	`"code":1311`,                                    // Z.ai
	"billing_error",                                  // fledger: Anthropic billing_error type (sibling of RE-005)
	"out of credits",                                 // fledger (RE-107): xAI "You have run out of credits"
	"余额不足", "欠费",                                     // CJK gateways: insufficient balance, arrears
)
var billingMore = []finder{
	newTable("spend_limit", "spend limit", "spending limit", "spend_limit", "spending_limit", "spend-limit", "spending-limit"),
	newPattern("insufficient_word_balance", `insufficient \w+ balance`, "insufficient").and("balance"),
	newSeq("subscription_plan_access", 80, []string{"current subscription plan"}, []string{"does not"}, []string{"include access"}),
	newSeq("model_current_plan", 80, []string{"model"}, []string{"not available"}, []string{"current plan"}),
	// fledger (RE-108): xAI "Your newly created team doesn't have any credits or licenses yet."
	negativeRemaining,
	// fledger (issue 17 third blind set): the account's credits used up —
	// Hugging Face "You have exceeded your monthly included credits for
	// Inference Providers", "You've used up your credits".
	newSeq("credits_used_up", 40, []string{"exceeded your", "exhausted your", "used up your", "used all your", "used all of your", "run out of your", "depleted your"},
		[]string{"credits", `\bcredit\b`}),
	newTable("no_credits", "doesn't have any credits", "does not have any credits", "don't have any credits", "do not have any credits",
		"doesn't have enough credits", "does not have enough credits", "don't have enough credits", "do not have enough credits"),
	billingLexicon,
}

// negativeRemaining: a remaining balance below zero, as relays print it
// (new-api "剩余额度: ＄-0.000002", "remaining balance: $-1.20"): the
// account is in arrears whatever the surrounding words (fledger, issue 17
// second blind set).
var negativeRemaining = newShape("negative_remaining", []string{"剩余额度", "剩余余额", "remaining quota", "remaining balance", "remaining credit", "balance"},
	0, "", 48, `(?:剩余额度|剩余余额|remaining (?:quota|balance|credits?)|balance)\s*(?:is\s*)?[:：=]?\s*[＄$¥￥€]?\s*-\s*[＄$¥￥€]?\d`)

// billingLexicon: balance, credit, arrears and paid-tier words in the
// languages providers answer in (fledger, issue 17). These name the
// account's money, never a request rate, so they are billing whatever the
// status (a leading "429" included, see rule 11). Calls to action that also
// end usage-window messages ("purchase more credits or try again at …",
// RE2-072) are deliberately absent.
var billingLexicon = newTable("billing_lexicon",
	// balance
	"positive balance", // Together "please make sure that you have a positive balance"
	"insufficient funds", "insufficient_funds", "not enough balance", "balance is insufficient", "balance is not enough",
	"balance not enough", "balance_not_enough", "insufficient_user_quota", // one-api/new-api gateways: user quota is prepaid balance
	"balance has been exhausted", "balance exhausted", "balance is exhausted", "balance depleted", "zero balance", "negative balance",
	"paid balance",                                                                               // SiliconFlow 30011 "The selected model requires paid balance. Your paid balance is insufficient."
	"budgetexceedederror", "budget has been exceeded", "exceeded budget", "exceeded your budget", // LiteLLM virtual-key budgets (like "out of budget")
	"credit_balance_exhausted", "credits exhausted", "credits have been exhausted", "ran out of credits", "no remaining credits",
	"credits are exhausted", "credits are depleted", "credits depleted", "no credits left", "no credit left", "out of credit", "credit limit",
	"trial has expired", "trial expired", "trial has ended", "trial period has ended",
	// arrears and payment
	"arrears", "arrearage", "overdue payment", "overdue balance", "outstanding balance", "past due", "unpaid invoice",
	"failure to pay", "in good standing", // DashScope Arrearage "make sure your account is in good standing"
	// fledger (issue 17 blind set): an account behind on payment, however
	// worded: "Access denied due to overdue account", "account suspended
	// for non-payment", "payment overdue", "unpaid bill".
	`\boverdue\b`, "non-payment", "nonpayment", "non payment", `\bunpaid\b`, "payment is overdue", "payment failed",
	"payment declined", "payment was declined", "card was declined", "card declined", "payment_required", "requires payment",
	"billing issue", "billing problem", "update your billing", "update your payment", "suspended due to insufficient",
	"逾期", "未支付", "未付款", "未缴费", "账单未结清", "已停机",
	// fledger (issue 17 second blind set): one-api/new-api relays, whose
	// "quota" is the user's prepaid balance and the key's budget (403
	// "用户额度不足, 剩余额度: ＄-0.000002", "预扣费额度失败, 用户剩余额度: …",
	// "该令牌额度已用尽"; English builds "user quota is not enough",
	// "pre-consume quota failed"). A bare 额度不足 stays a rate limit
	// (OpenClaw's table).
	"用户额度不足", "预扣费额度失败", "预扣费失败", "令牌额度已用尽", "令牌额度不足", "令牌余额不足",
	"user quota is not enough", "user quota is insufficient", "insufficient user quota", "pre-consume quota failed",
	"preconsume quota failed",
	"payment method", "billing hard limit", "billing_hard_limit", "billing_not_active", "billing is not active",
	// recharge / top up (Chinese providers' English: "Please recharge.")
	"please recharge", "recharge your account", "top up your", "top-up your", "add funds", "add more funds",
	// resource packages and paid tiers
	"no resource package", "resource package", "paid basis", "free tier only", // DashScope AllocationQuota.FreeTierOnly
	"free tier of the model has been exhausted", "free quota has been exhausted", "free quota exhausted",
	"subscription has expired", "subscription expired", "plan has expired", "plan expired", // Zhipu 1309 coding plan expired
	// Chinese (simplified and traditional)
	"余额不足", "余额已用完", "余额为零", "余额为0", "账户欠费", "已欠费", "欠费", "請充值", "请充值", "充值后", "资源包",
	"免费额度已用完", "免费额度已用尽", "套餐已到期", "套餐已过期", "餘額不足", "欠費",
	// Japanese, Korean
	"残高不足", "残高が不足", "クレジットが不足", "잔액 부족", "잔액이 부족", "크레딧이 부족",
	// Spanish, Portuguese, Italian, French, German, Russian
	"saldo insuficiente", "créditos insuficientes", "fondos insuficientes", "saldo insufficiente", "credito insufficiente",
	"solde insuffisant", "crédits insuffisants", "fonds insuffisants", "unzureichendes guthaben", "nicht genügend guthaben",
	"guthaben reicht nicht", "недостаточно средств", "недостаточный баланс", "пополните баланс",
)

// billingCondition: billing phrases that state the account's condition
// (no money, in arrears, behind on payment), not a billing noun ("credit
// balance", "payment method", "plans & billing" also occur in a server's
// "failed to fetch credit balance"). Under an explicit 5xx such a body is
// billing (status.5xx keeps it; docs/classification.md "Billing under a
// 5xx").
var billingCondition = newTable("billing_condition",
	"insufficient credits", "insufficient credit", "used all available credits", "insufficient_quota", "insufficient quota",
	"out of budget", "insufficient_balance", "insufficient balance", "requires more credits", "require more credits",
	"out of credits", "out of extra usage", "insufficient funds", "insufficient_funds", "not enough balance",
	"balance is insufficient", "balance is not enough", "balance not enough", "balance_not_enough", "insufficient_user_quota",
	"balance has been exhausted", "balance exhausted", "balance is exhausted", "balance depleted", "zero balance", "negative balance",
	"budgetexceedederror", "budget has been exceeded", "exceeded budget", "exceeded your budget", // LiteLLM virtual-key budgets (like "out of budget")
	"credit_balance_exhausted", "credits exhausted", "credits have been exhausted", "ran out of credits", "no remaining credits",
	"credits are exhausted", "credits are depleted", "credits depleted", "no credits left", "no credit left", "out of credit", "credit limit",
	"trial has expired", "trial expired", "trial has ended", "trial period has ended",
	"arrears", "arrearage", "overdue payment", "overdue balance", "past due", "unpaid invoice", "failure to pay",
	`\boverdue\b`, "non-payment", "nonpayment", `\bunpaid\b`, "billing hard limit", "billing_hard_limit", "billing_not_active",
	"billing is not active", "please recharge", "recharge your account", "no resource package", "suspended due to insufficient",
	"余额不足", "余额已用完", "余额为零", "余额为0", "账户欠费", "已欠费", "欠费", "请充值", "餘額不足", "欠費", "逾期",
	"残高不足", "잔액 부족", "잔액이 부족", "saldo insuficiente", "solde insuffisant", "недостаточно средств",
	"用户额度不足", "预扣费额度失败", "预扣费失败", "令牌额度已用尽", "令牌额度不足", "令牌余额不足",
	"user quota is not enough", "user quota is insufficient", "insufficient user quota", "pre-consume quota failed",
	"preconsume quota failed",
)

// billingHead: a leading billing phrase counts only with a purchase hint (ref §2.5).
var billingHead = []string{"billing", "credit balance", "insufficient credit", "payment required", "http 402"}
var purchaseHint = newTable("purchase_hint", "upgrade", "credits", "payment", "purchase", "subscription", "plan")

// periodicLimit: daily/weekly/monthly usage windows (ref §2.2 rule 12; seed
// 000 "What lands in the rate-limit / timeout bucket": "weekly limit
// reached", "monthly limit exhausted").
var periodicLimitRe = newPattern("periodic_limit",
	`\b(?:daily|weekly|monthly)(?:\s*/\s*(?:daily|weekly|monthly))*\s+(?:usage\s+)?limits?\b(?:\s+(?:exhausted|reached|exceeded))?`,
	"daily", "weekly", "monthly").and("limit")

// usageWindowMore: usage windows worded without "daily/weekly/monthly limit"
// (fledger, issue 17 family 6): "You've hit your limit · resets Feb 7,
// 11am", "You have exhausted your daily quota", "Your quota will reset
// after 8h44m7s", "session limit", "5-hour limit". A window that reopens
// by itself is a rate limit, not billing.
var usageWindowMore = []finder{
	// "You've hit your limit", "You have exhausted your daily quota", "has
	// reached its monthly token allowance".
	newShape("hit_your_limit", []string{"hit", "reached", "exhausted", "used up", "run out of", "used all of"},
		16, `\b(?:you(?:'|’)?ve|you have|you|has|have)\s+`,
		80, `(?:hit|reached|exhausted|used up|run out of|used all of)\s+(?:your|its|the)\s+(?:[\w-]+\s+){0,3}?(?:limit|quota|cap|allowance|capacity)\b`).
		and("limit", "quota", "cap", "allowance", "capacity").leftWith("you", "has", "have"),
	// fledger (issue 17 second blind set): an allowance or limit the user
	// exceeded — GitHub Copilot "You have exceeded your premium request
	// allowance", GitHub Models "You have exceeded your daily request
	// allowance". Not "quota": OpenAI's "You exceeded your current quota"
	// is rule 13's phrase (OpenClaw's table).
	newShape("exceeded_your_allowance", []string{"exceeded"},
		16, `\b(?:you(?:'|’)?ve|you have|you)\s+`,
		80, `exceeded\s+(?:your|the)\s+(?:[\w-]+\s+){0,3}?(?:allowance|limit|cap)s?\b`).
		and("allowance", "limit", "cap").leftWith("you"),
	// "limit · resets Feb 7, 11am", "Your quota will reset after 8h44m7s".
	newShape("window_resets", []string{"reset"},
		56, `\b(?:limit|limits|quota|usage|allowance|cap)\b[^.\n]*`,
		8, `resets?\b`).and("limit", "quota", "usage", "allowance", "cap").leftWith("limit", "quota", "usage", "allowance", "cap"),
	// "daily quota", "weekly usage limit", "session limit".
	newShape("period_quota", []string{"daily", "weekly", "monthly", "hourly", "session"},
		0, "",
		40, `(?:daily|weekly|monthly|hourly|session)\s+(?:usage\s+|request\s+|token\s+)?(?:limit|quota|cap|allowance)s?\b`).
		and("limit", "quota", "cap", "allowance"),
	// fledger (issue 17 second blind set): the same windows in Chinese —
	// "今日额度已用完", "每日免费次数已达上限", "本月配额已用尽".
	newSeq("cn_period_quota", 8, []string{"今日", "今天", "每日", "每天", "当日", "本日", "本周", "每周", "本月", "每月"},
		[]string{"额度", "次数", "配额", "限额", "用量"}),
	// "5-hour limit", "five-hour usage cap".
	newShape("hours_quota", []string{"hour"},
		8, `(?:\b\d+-|\bfive-|\b\d+ )`,
		40, `hour\s+(?:usage\s+|request\s+|token\s+)?(?:limit|quota|cap|allowance)s?\b`).
		and("limit", "quota", "cap", "allowance"),
}

// rateLimit: throttles and retryable quotas (ref §2.5 "rate_limit"; seed 000
// "What lands in the rate-limit / timeout bucket").
var rateLimitPhrases = newTable("rate_limit",
	"rate limit",                                               // OpenAI "Rate limit reached", Anthropic, Mistral, Groq
	"rate_limit",                                               // codes quoted in bodies
	"too many requests",                                        // 429 reason phrase
	"too many concurrent requests",                             // seed 000
	"throttling",                                               // Bedrock ThrottlingException
	"throttled",                                                // seed 000
	"model_cooldown",                                           // OpenClaw proxies: "model_cooldown: All credentials … cooling down"
	"exceeded your current quota",                              // OpenAI, Gemini
	"resource exhausted",                                       // gRPC
	"resource_exhausted",                                       // Gemini/Vertex status
	"resource-exhausted",                                       //
	"quota exceeded",                                           // Gemini "Quota exceeded for metric", Copilot
	"usage limit",                                              // Codex "You have reached your usage limit", OpenCode
	`\btpm\b`,                                                  // tokens-per-minute hints (Groq, OpenAI)
	"tokens per minute",                                        // Anthropic "input tokens per minute"
	"tokens per day",                                           // Bedrock "Too many tokens per day"
	"request rate is too high",                                 // fledger (RE-033): Bedrock Agents throttlingException text
	"resource has been exhausted",                              // fledger: Google RESOURCE_EXHAUSTED's message without the code
	"ratelimiterror",                                           // fledger: OpenAI/LiteLLM SDK class names (sibling of RE-013/RE-064)
	"请求过于频繁", "调用频率", "频率限制", "配额不足", "配额已用尽", "额度不足", "额度已用尽", // CJK gateways
)

// rateLexicon: request-rate and concurrency words beyond the reference's
// table (fledger, issue 17): Zhipu 1302/1303 "并发数过高", Baidu ERNIE
// "并发超限", "限流"; Japanese, Korean, Spanish.
var rateLexicon = newTable("rate_lexicon",
	"并发数过高", "并发过高", "并发超限", "并发数超过", "请求频率过高", "频率过高", "请求次数过多", "请求过多", "限流", "速率限制",
	"調用頻率", "請求過於頻繁",
	"レート制限", "リクエストが多すぎ", "요청이 너무 많", "속도 제한", "demasiadas solicitudes", "límite de velocidad",
	"too many concurrent", "concurrency limit exceeded", "concurrent requests limit",
	"concurrent request limit", "concurrent requests limit reached", "concurrency limit reached", // fledger (issue 17 fourth blind set): Kimi 403 "You've reached your concurrent request limit"
	"slow down", // OpenAI slow_down "Please slow down"
	// fledger (issue 17 third blind set): LiteLLM's router when every
	// deployment of the model is cooling down after failures.
	"no deployments available",
	// fledger (issue 17 blind set): request-frequency words of the Chinese
	// providers and gateways, as words rather than sentences: Baidu Qianfan
	// "访问过于频繁，请稍候再试", "请求太频繁", "调用过快", "超过QPS限制".
	"过于频繁", "太频繁", "请求频繁", "访问频繁", "调用频繁", "频繁请求", "频繁访问", "频繁调用",
	"请求过快", "调用过快", "访问过快", "请求速度过快", "频次超限", "超过调用频次", "超出频率", "超过频率", "请求频率超",
	"qps超限", "超过qps", "超出qps", "qps限制", "rpm限制", "tpm限制",
	"過於頻繁", "太頻繁", "請求頻繁", "頻率過高", "限流中",
	"流控", "流量控制", // iFlytek Spark 11202/11203 "授权错误：秒级流控超限"
	"requests per minute", "requests per second", "calls per minute", "too many calls",
	// fledger (issue 17 second blind set): DashScope Throttling.BurstRate
	// "Request rate increased too quickly", "sending requests too quickly";
	// per-day request counts ("the maximum number of requests per day");
	// 请求次数超过限制.
	"increased too quickly", "requests too quickly", "requests too fast", "requests per day", "requests per hour", "requests for today",
	"quota_exceeded", "请求次数超", "调用次数超", "次数超过限制", "次数已达上限", "次数已用完",
)

// rateMore: rate-limit families beyond fixed phrases (fledger, issue 17
// blind set):
//
//   - "rate limit" tokenised alike however it is joined: "Ratelimit
//     exceeded" (Mistral Vibe), "rate-limited", "RateLimited" — but not a
//     header name ("x-ratelimit-remaining: 10" in a dumped response), so
//     the word must not touch a hyphen on the outside;
//   - "too many tokens / requests / calls …, please wait / try again later"
//     (Bedrock ThrottlingException "Too many tokens, please wait before
//     trying again.", relayed with no status);
//   - a request-rate limit named by its unit: "request limit exceeded", "QPS
//     limit reached", "exceeded the RPM".
var rateMore = []finder{
	newJoined("rate_limit_joined", []string{"ratelimit", "rate-limit"}, "ed", "ing", "s", "exceeded", "reached", "exception"),
	newSeq("too_many_wait", 40,
		[]string{"too many tokens", "too many requests", "too many calls", "too many attempts", "too many connections"},
		[]string{"please wait", "wait before", "wait a moment", "try again later", "retry later", "slow down", "try again in", "retry after"}),
	newSeq("request_unit_limit", 24,
		[]string{"request limit", "requests limit", "call limit", "calls limit", `\bqps\b`, `\brpm\b`, `\brps\b`},
		[]string{"exceeded", "reached", `\bhit\b`, "超限", "超过"}),
	newSeq("exceeded_request_unit", 16, []string{"exceeded"}, []string{`\bqps\b`, `\brpm\b`, `\brps\b`, "request rate", "requests per"}),
}

// status429InText: a 429 status in text (ref §2.5): leading 429, "status
// 429", "HTTP 429", a JSON status/code 429, or 429 next to rate/quota words.
var status429InText = newPattern("429_in_text", `^\W{0,3}429\b|\b(?:http|status|response|code)\W{0,3}(?:code\W{0,3})?429\b|\b429\b\W{0,5}(?:too many|rate|resource|quota|throttl)`, "429")
var concurrencyLimit = newSeq("concurrency_limit", 60, []string{"concurrency limit"}, []string{"breached", "reached"}) // Together

// overloaded: provider capacity trouble (ref §2.5 "overloaded"; seed 000
// "Provider-busy signals such as ModelNotReadyException").
var overloadedPhrases = newTable("overloaded",
	"overloaded",                                // Anthropic overloaded_error, OpenAI "That model is currently overloaded"
	"service unavailable",                       // 503 reason phrase
	"service_unavailable",                       //
	"service temporarily unavailable",           //
	"high demand",                               // Gemini "experiencing high demand"
	"high load",                                 //
	"capacity exceeded",                         // fledger (RE-099): Mistral "Service tier capacity exceeded for this model."
	"serviceunavailableexception",               // fledger (RE-059): Bedrock event-stream :exception-type
	"bedrock is unable to process your request", // fledger (RE-059): the body of that exception
	"服务过载", "当前负载过高", "访问量过大",                   // CJK gateways
)
var atCapacity = newTable("at_capacity", "model at capacity", "model is at capacity")

// overloadLexicon: provider capacity in the providers' words (fledger,
// issue 17 blind set): the new-api/one-api gateways' "当前分组上游负载已饱和，
// 请稍后再试" (the group's upstream is saturated), DeepSeek's "服务器繁忙，请
// 稍后再试", "算力不足", "访问人数过多"; English "no capacity available",
// "servers are busy". OpenClaw's own 系统繁忙 and 服务繁忙 stay server text /
// timeout (ref §2.5), so bare 繁忙 is not here. A load or pressure word
// counts only with a "try again later" beside it (稍后再试 alone is no
// evidence: it ends rate-limit and balance messages too).
var overloadLexicon = []finder{
	newTable("overload_lexicon",
		"负载已饱和", "负载饱和", "已饱和", "负载过高", "负载过大", "负载较高", "高负载", "过载", "拥挤", "拥堵",
		"服务器繁忙", "模型繁忙", "线路繁忙", "上游繁忙", "通道繁忙", "渠道繁忙", "节点繁忙", "资源繁忙", "服务器忙",
		"算力不足", "算力资源不足", "资源紧张", "访问人数过多", "使用人数过多", "排队人数过多", "服务器压力过大",
		"負載過高", "伺服器繁忙", "過載",
		"no capacity available", "insufficient capacity", "out of capacity", "capacity is exhausted", "capacity exhausted",
		"server is busy", "servers are busy", "server busy", "servers are currently busy", "server is currently busy",
		"heavy load", "heavy traffic", "high traffic", "too much traffic", "currently at capacity", "over capacity",
		"high volume of requests", "high request volume",
		"service is currently unavailable", "service is temporarily unavailable", // not a bare "temporarily unavailable": rule 23 (api_error + transient → timeout) is OpenClaw's
		// fledger (issue 17 second blind set): busy in English (SiliconFlow
		// 50508 "System is too busy now", Hugging Face "Model too busy,
		// unable to get response"), degraded service (NVIDIA NVCF "DEGRADED
		// function cannot be invoked", status pages' "degraded performance").
		"too busy", "busy or unavailable", `\bdegraded\b`,
		"too many people", "too many users", "heavy usage", "high usage", // "Too many people are using this model right now"
		"capacity constraints", "capacity constraint", "capacity problems", "capacity issues", // "due to capacity constraints"; Apache 503 "… capacity problems"
	),
	// "Inference capacity for this model is exhausted", "capacity is full".
	newSeq("capacity_state", 24, []string{"capacity"}, []string{"exhausted", "is full", "is unavailable", "unavailable", "is insufficient", "not available", "is limited"}),
	newSeq("load_try_later", 30, []string{"负载", "压力"}, []string{"稍后", "稍候", "再试", "重试"}),
	// "The engine is currently busy", "servers are all busy", "GPUs are
	// busy": a serving subject that is busy.
	newShape("subject_busy", []string{"busy"}, 40,
		`\b(?:system|server|servers|service|services|model|models|backend|backends|engine|cluster|gpus?|devices?|nodes?|workers?|upstream|instances?|replicas?)\s+(?:is|are)\s+(?:(?:currently|temporarily|all|very|extremely|too|still|now)\s+){0,2}`,
		4, `busy\b`).leftWith(" is ", " are "),
}

// modelWarming: the model is still loading or not ready, a provider-busy
// signal like Bedrock's ModelNotReadyException (seed 000 "Provider-busy
// signals"; fledger): Hugging Face "Model x is currently loading"
// (estimated_time), Together "The server is overloaded or not ready yet".
var modelWarming = newTable("model_warming", "is currently loading", "model is loading", "model is still loading",
	"model is not ready", "model not ready", "not ready yet", "model is warming up", "model is being loaded",
	"model is unloaded", "no models loaded", "model not loaded", // LM Studio: the local model is not in memory
	// fledger (issue 17 second blind set): a serving endpoint that is still
	// starting (serverless cold starts, scaling deployments).
	"server is not ready", "service is not ready", "worker is not ready", "endpoint is not ready", "is not ready yet", "is starting up",
	"is still starting", "cold start", "is scaling up", "scaling up from zero", "is booting")

// modelWarmingBare: a whole message that is only the loading state
// (llama.cpp server 503 "Loading model", type unavailable_error).
var modelWarmingBare = map[string]bool{"loading model": true, "model loading": true, "loading the model": true}

// runtimeFailure: the serving runtime failed (fledger, issue 17 second
// blind set; rule 16a → server_error). It ran out of memory — PyTorch "CUDA out of memory.
// Tried to allocate …", "CUDA error: out of memory", llama.cpp "cudaMalloc
// failed: out of memory", Apple "MPS backend out of memory", ROCm "HIP out
// of memory", Ollama "model requires more system memory (39.4 GiB) than is
// available (30.0 GiB)", 显存不足. A server-side failure like a 5xx: it
// touches no profile health and another candidate may serve the request;
// not overloaded, whose whole-chain retry waits for load to pass (a model
// too big for the host does not pass). Busy devices ("all CUDA-capable
// devices are busy or unavailable") are load: overloadLexicon, rule 14.
// Or its process crashed or exited — Ollama "llama runner process has
// terminated: exit status 0xc0000409", "llama runner process no longer
// running", LM Studio "The model has crashed without additional
// information. (Exit code: …)", vLLM "AsyncEngineDeadError: Background
// loop has errored already", "EngineDeadError", GGML_ASSERT, segmentation
// faults. A model that failed to load with such evidence is this failure,
// not a missing model (see modelNotFoundMatch).
var runtimeFailure = []finder{
	newTable("server_resource", "out of memory", "outofmemoryerror", "cudamalloc failed", "cuda_error_out_of_memory", "cublas_status_alloc_failed",
		"requires more system memory", "requires more memory", "requires more gpu memory", "requires more vram", "not enough memory",
		"insufficient memory", "failed to allocate memory", "memory allocation failed", "cannot allocate memory", "insufficient vram",
		"not enough vram", "内存不足", "显存不足", "顯存不足", "記憶體不足"),
	newSeq("runtime_process_died", 24, []string{"runner process", "server process", "runner", "subprocess", "child process", "worker process", "engine process", "model process", "inference process"},
		[]string{"has terminated", "terminated", "no longer running", "has exited", "exited unexpectedly", "crashed", "has died", "died", "was killed", "killed"}),
	newTable("runtime_crash", "while running the model", "model runner has unexpectedly stopped", "model runner stopped",
		"llama runner", "model has crashed", "model crashed", "enginedeaderror", "engine loop has died", "background loop has errored",
		"engine core died", "enginecore encountered", "ggml_assert", "segmentation fault", "core dumped", "signal: killed", "signal: aborted",
		"illegal instruction"),
	// "(Exit code: 18446744072635810000)", "exit status 0xc0000409": a
	// runtime that exited non-zero.
	newShape("runtime_exit_code", []string{"exit code", "exit status"}, 0, "", 40, `exit (?:code|status)\W{0,3}(?:0x[0-9a-f]+|-?[1-9]\d*)`).
		and("model", "runner", "llama", "engine", "process", "server"),
}

// finishReasonError: provider-completed error stop reasons are server_error
// (ref §2.5; seed 000: "Unhandled stop reason: error", "Provider
// finish_reason: error").
var finishReasonError = newKeyed("finish_reason_error", []string{"finish_reason", "reason"}, []string{"error"})

// structuredServerError: JSON type/code server_error or upstream_error (ref §2.2 rule 16).
var structuredServerError = newKeyed("structured_server_error", []string{"type", "code"}, []string{"server_error", "upstream_error"})

// genericInternal: a bare generic internal error from a provider (ref §2.2
// rule 17; our reading of isGenericProviderInternalError). A bare "Internal
// error" is deliberately absent: OpenClaw's xAI plugin turns exactly that
// into server_error, which it could not do if rule 17 had matched first.
var genericInternalBare = map[string]bool{
	"an internal error occurred": true, "an internal error has occurred": true,
	"internal error occurred": true, "internal error encountered": true, // Gemini 500
	"internal server error": true,
}

// oauthRefreshPermanent: refresh failures that a retry cannot fix; the user
// must sign in again (ref §2.2 rule 18, our reading of oauth-refresh-failure.ts).
var oauthRefreshPermanent = newTable("oauth_refresh_permanent",
	"refresh_token_reused",                // fledger (RE-125): OpenAI Codex
	"refresh token has already been used", // fledger (RE-125)
	"invalid_grant",                       // RFC 6749 refresh rejection
	"refresh token is invalid",            //
	"refresh token has been revoked",      //
	"refresh token was revoked",           //
)

// authPermanent: high-confidence revocations (ref §2.5 "auth_permanent").
var authPermanentPhrases = newTable("auth_permanent",
	"deactivated workspace",                             // OpenAI
	"deactivated_workspace",                             //
	"key has been disabled",                             //
	"key has been revoked",                              //
	"account has been deactivated",                      //
	"not allowed for this organization",                 // Anthropic OAuth on a disallowed org
	"organization has been disabled",                    // fledger (RE-088): Anthropic "This organization has been disabled."
	"deactivated account",                               // fledger (RE-090): OpenAI "associated with a deactivated account"
	"associated with this api key has been deactivated", // fledger (RE-089): OpenAI
	"does not meet scope requirement",                   // fledger (RE-137): Anthropic OAuth token lacks user:inference
	// fledger (issue 17 second blind set): a revoked or leaked credential,
	// like "key has been revoked": "OAuth token has been revoked", Gemini
	// "Your API key was reported as leaked. Please use another API key."
	"token has been revoked", "token was revoked", "token revoked", "reported as leaked",
	// fledger (issue 17 third blind set): an account or product disabled
	// for a terms violation — Gemini "Gemini has been disabled in this
	// account for violation of Terms of Service" (see authPermanentSeq).
	"disabled in this account", "account has been disabled", "account has been terminated", "account has been permanently",
)

// authPermanentSeq: disabled, banned or terminated for a violation of the
// provider's terms: no retry or other key of the account will help.
var authPermanentSeq = newSeq("disabled_for_violation", 60,
	[]string{"disabled", "banned", "terminated", "deactivated", "suspended permanently", "permanently suspended"},
	[]string{"violation of", "violating", "violated", "terms of service", "terms of use", "tos violation"})
var authPermanentRe = newPattern("api_key_revoked",
	`api[ _\-]?key[ _\-]?(?:has been |was |is )?(?:revoked|deactivated|deleted)`, "revoked", "deactivated", "deleted").and("api")

// auth: credentials refused (ref §2.5 "auth").
var authPhrases = newTable("auth",
	"permission_error",                     // Anthropic type
	"incorrect api key",                    // OpenAI
	"invalid token",                        //
	"authentication",                       // Anthropic authentication_error, "Authentication Fails"
	"re-authenticate",                      //
	"oauth token refresh failed",           //
	"unauthorized",                         //
	`\bforbidden`,                          // fledger (issue 17 third blind set): a word, not pydantic's "extra_forbidden" (a schema error)
	"access denied",                        //
	"insufficient permission",              //
	"missing scope:",                       //
	"missing scopes:",                      //
	"expired",                              // OAuth "token has expired"
	`\b401\b`,                              //
	`\b403\b`,                              //
	"no credentials found",                 //
	"not authenticated", "unauthenticated", // fledger (issue 17 third blind set): DeepInfra "Not authenticated" under an invalid_request_error type
	"no api key found",                          //
	`"code":1113`,                               // Z.ai
	"无权访问", "认证失败", "鉴权失败", "密钥无效", "apikey 无效", // CJK gateways
	"ce-011", // Baidu
)
var authMore = []finder{
	newTable("invalid_api_key", wordBounded(
		variants("invalid", "api", "key"), variants("invalid", "x-api", "key"),
		variants("api", "key", "invalid"), variants("api", "key", "is", "invalid"),
		variants("api", "key", "not", "valid"), []string{"api key is not valid"},
	)...),
	// fledger (issue 17 fourth blind set): the same, wrapped across lines
	// by a CLI ("Incorrect API\n    key provided").
	newSeq("api_key_wrapped", 8, []string{"incorrect api", "invalid api"}, []string{"key"}),
	newSeq("could_not_authenticate", 60, []string{"could not authenticate", "could not validate"}, []string{"api key", "credentials"}),
	newSeq("failed_token", 60, []string{"failed to extract", "failed to parse", "failed to validate", "failed to decode"}, []string{"token"}),
	newSeq("cjk_ak", 40, []string{"当前ak"}, []string{"违规请求", "禁止访问"}), // Baidu Qianfan
	// fledger: AWS signature credentials (UnrecognizedClientException,
	// InvalidSignatureException, InvalidClientTokenId) worded without the code.
	newTable("aws_credentials", "security token included in the request is invalid", "request signature we calculated does not match",
		"aws access key id you provided does not exist"),
	// fledger (issue 17 family 8): AWS IAM "User: arn:… is not authorized to
	// perform: bedrock:InvokeModel", "not authorized to invoke this API
	// operation"; a missing credential ("We couldn't find a secret with the
	// name XAI_API_KEY", "API key is missing").
	newTable("not_authorized", "not authorized to perform", "not authorized to invoke", "not authorized to access",
		"is not authorized to", "with an explicit deny", "missing api key", "api key is missing", "api key is required",
		// fledger (2026-12-07 breaker): OpenAI's unset key, "You didn't
		// provide an API key. You need to provide your API key in an
		// Authorization header…".
		"didn't provide an api key", "did not provide an api key", "no api key provided",
		"no api key provided", "api key not provided", "api key not set", "api key is not set", "missing credentials",
		"no auth credentials", "credentials not found"),
	newSeq("missing_secret", 30, []string{"couldn't find", "could not find", "can't find", "cannot find", "unable to find"},
		[]string{"secret", "api key", "api_key", "apikey", "credential"}),
	// fledger (issue 17 second blind set): a credential the provider
	// rejects, named by its kind — Baidu Qianfan "Access token invalid or no
	// longer valid", "The access token provided is invalid", "Bearer token
	// is invalid", GitHub "Bad credentials", Hugging Face "Invalid
	// credentials in Authorization header", one-api 无效的令牌 / 令牌无效.
	newShape("credential_invalid", []string{"token", "credential"},
		24, `\b(?:access|auth|authentication|authorization|bearer|api|oauth|id|session|security)[ _-]?$`,
		64, `(?:tokens?|credentials?)\b(?:\s+(?:provided|supplied|you provided|given|used))?\s+(?:(?:is|are|was|were|has been|have been|seems)\s+)?(?:invalid|not valid|no longer valid|incorrect|malformed|unrecognized|not recognized|wrong|bad)\b`),
	// A credential the client never sent (openai-python "The api_key client
	// option must be set either by passing api_key to the client or by
	// setting the OPENAI_API_KEY environment variable"), a caller the API
	// does not know (Google "Method doesn't allow unregistered callers"),
	// an API not enabled for the project (Google SERVICE_DISABLED "… has
	// not been used in project 123 before or it is disabled"), a
	// permission the caller lacks ("Permission denied on resource
	// project", "The caller does not have permission", Bedrock "You don't
	// have access to the model with the specified model ID", "Project not
	// allowed to access this model").
	newSeq("api_key_unset", 80, []string{"api_key", "api key", "apikey"}, []string{"must be set", "environment variable", "is not set", "was not set", "not configured"}),
	newTable("caller_unknown", "unregistered callers",
		// fledger (issue 17 third blind set): model access the account has
		// not been granted — Bedrock "You have not filled out the required
		// use-case form for this model … before requesting access", "Model
		// use case details have not been submitted for this account".
		"use-case form", "use case form", "use case details have not been submitted", "before requesting access",
		"request access to this model", "access to this model has not been granted", "access to model is not enabled", "has not been used in project", "permission denied", "permission_denied",
		"does not have permission", "do not have permission", "don't have permission", "doesn't have permission", "not have permission to",
		"lacks permission", "lack permission", "not allowed to access", "没有权限", "无访问权限", "权限不足"),
	noAccess,
	newTable("credential_invalid_words", "invalid access token", "invalid access_token", "invalid auth token", "invalid authentication token",
		"invalid bearer token", "invalid oauth token", "invalid api token", "invalid credentials", "invalid credential", "bad credentials",
		"incorrect credentials", "wrong credentials", "invalid authorization", "令牌状态不可用",
		"无效的令牌", "令牌无效", "令牌已过期", "令牌过期", "令牌验证失败", "未提供令牌", "token无效", "token已过期", "token 无效", "访问令牌无效"),
	// A credential restricted to another product (Anthropic "This
	// credential is only authorized for use with Claude Code and cannot be
	// used for other API requests").
	newSeq("credential_scope", 30, []string{"credential", "api key", "token", "oauth", "subscription key"},
		[]string{"only authorized for", "is only authorized", "only be used with", "only be used for", "cannot be used for other", "is not authorized for use"}),
	// An account or organization in a blocked state (Groq "Organization has
	// been restricted", "Your organization has been suspended", "Your
	// account is restricted from using the API", new-api 用户已被封禁): the
	// credential is refused for the account, not the request. Permanent
	// revocations ("has been disabled/deactivated") are rule 19's; an
	// account suspended for non-payment is billing (rule 11 first).
	newShape("account_blocked", []string{"account", "organization", "organisation", "workspace", "tenant"},
		0, "",
		72, `(?:account|organi[sz]ation|workspace|tenant)\b(?:\s+[\w-]+)?\s+(?:has been|have been|is|was|got|has|is currently|is temporarily|has temporarily been)\s+(?:temporarily\s+|permanently\s+)?(?:restricted|suspended|banned|blocked|locked|frozen|terminated)\b`),
	newTable("account_blocked_cjk", "已被封禁", "账户已被冻结", "账号已被冻结", "账户已冻结", "账号已冻结", "账户已停用", "账号已停用",
		"账户被封", "账号被封", "账户已被禁用", "账号已被禁用", "用户已被禁用"),
	// A region or location the provider does not serve (OpenAI
	// unsupported_country_region_territory "Country, region, or territory
	// not supported", Gemini "User location is not supported for the API
	// use", Cursor "This model provider doesn't serve your region",
	// "not available in your country"): the account cannot be served from
	// here, like Gemini's FAILED_PRECONDITION. A cloud region in a
	// deployment ("not supported in region 'westus'") is not the user's.
	regionBlocked,
	newShape("region_not_supported", []string{"your ", "user location", "user's location", "user region", "user country", "country, region", "country or region"},
		0, "",
		64, `(?:your|user(?:'|’)?s?)\s+(?:country|region|location|territory|area)\s+(?:(?:is|are)\s+)?(?:not supported|unsupported|not available|unavailable|not allowed|not permitted|restricted|blocked)|country,\s*region,?\s*(?:or|and)\s*territory\s+(?:(?:is|are)\s+)?not supported|country or region\s+(?:(?:is|are)\s+)?not supported`),
	newSeq("region_cn", 12, []string{"不支持", "暂不支持", "不可用", "暂不提供", "无法在", "不对"}, []string{"所在地区", "所在的地区", "所在区域", "所在国家", "您的地区"}),
	newSeq("region_cn_rev", 12, []string{"所在地区", "所在的地区", "所在区域", "所在国家", "您的地区"}, []string{"不支持", "暂不支持", "不可用", "无法使用", "不提供"}),
}

// noAccess: "you don't have access to the model" — but not OC-039's "The
// deployment does not exist or you do not have access", which names two
// conditions and stays unclassified (OpenClaw parity).
var noAccess finder = unlessIn{newSeq("no_access", 24,
	[]string{"do not have access", "don't have access", "don’t have access", "does not have access", "doesn't have access", "doesn’t have access", "has no access", "have no access"},
	[]string{"to"}), orNoAccess}

// regionBlocked: a refusal in front of the user's region ("not available
// in your region", "doesn't serve your region", "is blocked in your
// country").
var regionBlocked = newShape("region_blocked", []string{"your region", "your country", "your location", "your territory", "your area", "user location", "user's location"},
	40, `(?:\bnot\b|\b[a-z]*n(?:'|’)t\b|\bunavailable\b|\bunsupported\b|\bblocked\b|\brestricted\b|\bprohibited\b)[^.\n]{0,24}$`,
	24, `(?:your|user(?:'|’)?s?) (?:region|country|location|territory|area)\b`).leftWith("not", "n't", "n’t", "unavailable", "unsupported", "blocked", "restricted", "prohibited")

// server: message-level server text maps to timeout (ref §2.2 rule 22, §2.5
// "server text").
var serverPhrases = newTable("server",
	"an error occurred while processing",    // OpenAI
	"internal server error",                 //
	"internal_error",                        //
	"server_error",                          //
	"bad gateway",                           //
	"gateway timeout",                       //
	"upstream error",                        //
	"upstream connect error",                // Envoy
	"connection reset",                      //
	"内部错误", "服务器错误", "系统错误", "系统繁忙", "系统异常", // CJK gateways
)
var serverMore = []finder{
	// fledger: OpenAI's other server wordings, "The server had an error
	// while processing your request", "there was another issue processing
	// your request".
	newSeq("issue_processing_request", 24, []string{"had an error", "issue", "problem", "error occurred"}, []string{"processing your request"}),
	newPattern("http_5xx", `\bhttp\s*5\d\d\b`, "http").and("http 5", "http5"),
	newTable("status_internal_500", "status: internal server error"),
}

// apiErrorTransient: an Anthropic-style {"type":"api_error"} with transient
// text is a timeout (ref §2.2 rule 23; seed 000: "unknown error, 520").
var apiErrorType = newKeyed("api_error_type", []string{"type"}, []string{"api_error"})
var transientText = newTable("transient",
	"internal server error", "overload", "temporarily unavailable", "service unavailable",
	"unknown error", "server error", "bad gateway", "gateway timeout", "upstream error",
	"backend error", "try again later", "unexpected error",
)
var temporarilyUnable = newSeq("temporarily_unable", 40, []string{"temporarily"}, []string{"unable"})

// format: invalid requests (ref §2.5 "format").
var formatPhrases = newTable("format",
	"string should match pattern",                // Cloud Code Assist tool ids
	"tool_use.id",                                // Anthropic
	"tool_use_id",                                //
	"invalid request format",                     //
	"does not support assistant message prefill", // Anthropic
	"conversation must end with a user message",  //
)
var formatMore = []finder{
	// fledger (issue 17): the provider could not read the request body
	// (DeepSeek "Failed to parse the request body as JSON", "Failed to
	// deserialize the JSON body into the target type: … unknown variant").
	newSeq("request_body_unreadable", 24, []string{"failed to parse", "failed to deserialize", "could not parse", "unable to parse", "cannot parse", "error parsing"},
		[]string{"request body", "json body", "body as json", "request json"}),
	newTable("unknown_variant", "unknown variant `"),
	// fledger (issue 17 second blind set): Go servers (Ollama) that could
	// not decode the request: "json: cannot unmarshal string into Go struct
	// field ChatRequest.messages of type api.Message".
	newSeq("cannot_unmarshal_request", 80, []string{"cannot unmarshal"}, []string{"request"}),
	// A capability the model does not have, asked for by the request
	// (Ollama "registry.ollama.ai/library/gemma:2b does not support tools",
	// DeepSeek "deepseek-reasoner does not support Function Calling"): the
	// same request fails the same way on this model, like rule 2's images.
	newTable("capability_unsupported", "does not support tools", "doesn't support tools", "does not support tool", "doesn't support tool",
		"does not support function calling", "doesn't support function calling", "tool calling is not supported", "tools are not supported",
		"function calling is not supported", "tool use is not supported", "tools is not supported", "不支持工具调用", "不支持函数调用"),
	// fledger (issue 17 second blind set): the model's chat template could
	// not render the conversation — LM Studio "Error rendering prompt with
	// jinja template: …", llama.cpp "Jinja Exception: …", vLLM/transformers
	// "jinja2.exceptions.TemplateError: …", "Failed to apply chat
	// template", TGI "Template error: …" (error_type template_error). The
	// same conversation fails the same way every time.
	newTable("chat_template", "jinja template", "jinja exception", "jinja2.exceptions", "templateerror", "template error",
		"error rendering prompt", "failed to render prompt", "apply chat template", "apply_chat_template", "chat template", "prompt template"),
	// fledger (issue 17 third blind set): a request refused by the
	// provider's schema validator — JSON Schema "required properties at '/'
	// are 'contexts'", "is a required property", "Additional properties are
	// not allowed"; pydantic "Extra inputs are not permitted"
	// (extra_forbidden), "Field required" (missing): the same body fails
	// the same way.
	newTable("schema_validation", "required properties", "is a required property", "missing required property", "missing required properties",
		"additional properties are not allowed", "additionalproperties", "extra inputs are not permitted", "extra_forbidden",
		`"type":"missing"`, `"type": "missing"`, "field required", "missing required parameter", "missing required field",
		"unrecognized request argument", "unknown parameter", "unrecognized parameter", "unsupported parameter", "is not a valid enum value",
		"input should be a valid", "value is not a valid", "failed validation", "validation error for", "validation errors for"),
	newSeq("tool_call_id_must", 80, []string{"tool call id was"}, []string{"must be"}),
	// fledger (2026-12-07 breaker, bare messages): a body the provider
	// could not read as JSON (Anthropic "The request body is not valid
	// JSON: …"); Gemini's turn order ("Please ensure that function response
	// turn comes immediately after a function call turn") and request
	// validator ("* GenerateContentRequest.contents: contents is not
	// specified"); OpenRouter's `Input required: specify "prompt" or
	// "messages"`; OpenAI refusing a prompt's "repetitive patterns", and an
	// image URL it could not fetch ("Timeout while downloading https://…":
	// the same request fails on every profile, not a transport timeout).
	// The same request fails the same way every time.
	newSeq("request_body_not_json", 24, []string{"request body", "request payload"}, []string{"not valid json", "is not json", "invalid json"}),
	newTable("request_shape", "function response turn comes immediately after", "comes immediately after a function call turn",
		"generatecontentrequest.", `specify "prompt" or "messages"`, "repetitive patterns in your prompt", "timeout while downloading http"),
	newSeq("harness_provider", 120, []string{"agent harness"}, []string{"does not support"}, []string{"provider is not one of"}),
}

// timeout: transport-shaped failures (ref §2.5 "timeout"; seed 000:
// "Transport-shaped finish reasons such as abort, network_error and
// malformed_response stay in the timeout/failover bucket").
var timeoutPhrases = newTable("timeout",
	"timeout", "timed out", "deadline exceeded",
	"connection error",                      // Anthropic/OpenAI SDK "Connection error."
	"network error",                         //
	"network request failed",                //
	"fetch failed",                          // undici
	"socket hang up",                        // Node
	"stream disconnected before completion", // Codex
	"premature close of server response while trying to fetch", //
	"stream ended before message_stop",                         // incomplete streams
	"stream ended before terminal finish reason",
	"stream ended before terminal response event",
	"stream ended without a terminal finish reason",
	"stream ended without finish reason",
	"stream ended without a finish reason",
	"responses stream ended with unresolved tool calls",
	"without sending any chunks", "without sending chunks", "without sending any chunk", "without sending chunk",
	"operation was aborted", // undici/AbortSignal without an AbortError name
	"request failed after repeated internal retries",
	`\beconnrefused\b`, `\beconnreset\b`, `\beconnaborted\b`, `\benetunreach\b`, `\benetreset\b`,
	`\behostunreach\b`, `\behostdown\b`, `\betimedout\b`, `\besockettimedout\b`, `\bepipe\b`,
	`\benotfound\b`, `\beai_again\b`,
	"und_err_socket", "und_err_connect", "und_err_header", "und_err_body",
	"und_err_req_content_length_mismatch", "und_err_aborted", "und_err_closed",
	"time-out",                                                // fledger: "504 Gateway Time-out" (nginx)
	"网络错误", "网络异常", "服务暂时不可用", "服务繁忙", "请求超时", "连接超时", "连接错误", // CJK gateways
)
var timeoutMore = []finder{
	newKeyed("transport_finish_reason", []string{"finish_reason", "reason"}, []string{"abort", "malformed_response", "network_error"}),
	// ref §2.5 "stream (was) closed/aborted". fledger (issue 17 second
	// blind set): not when the closure names a provider error as its cause
	// — a router's "Inference stream closed due to error from openai
	// server: Invalid status code: 400 … {code 1214 …}" is the provider's
	// 400, not a dropped stream.
	newShape("stream_closed", []string{"stream closed", "stream was closed", "stream aborted", "stream was aborted"}, 0, "",
		24, `stream (?:was )?(?:closed|aborted)`).unless(closedByError...),
	newSeq("got_status_internal", 80, []string{"got status: internal", `"status":"internal"`, `"status": "internal"`}, []string{`\b500\b`}), // Gemini
	// fledger (issue 17 blind set): the connection dropped, in each
	// runtime's words — a transport failure like socket hang up (seed 000:
	// transport-shaped failures stay in the timeout/failover bucket):
	//   Bun "The socket connection was closed unexpectedly", Node undici
	//   "other side closed", Deno/reqwest "connection closed before message
	//   completed", Python httpx "Server disconnected without sending a
	//   response" / "peer closed connection without sending complete
	//   message body", aiohttp "ServerDisconnectedError", requests
	//   "RemoteDisconnected('Remote end closed connection without
	//   response')", Go net/http "connection reset by peer", "unexpected
	//   EOF", "use of closed network connection", "http2: server sent
	//   GOAWAY", Java "SocketException: Connection reset", curl "(52)
	//   Empty reply from server".
	newShape("connection_dropped", []string{"socket", "connection", "stream", "server", "peer", "remote end", "remote host", "other side", "upstream"},
		0, "",
		48, `(?:socket|connection|stream|server|peer|remote end|remote host|other side|upstream)(?: connection)?(?:\s+(?:was|has been|is|got|had|unexpectedly))?\s+(?:closed|disconnected|reset|dropped|terminated|aborted|broken|lost|refused|hung up|hang up)\b`).
		unless(closedByError...),
	// fledger (issue 17 second blind set): an app or gateway that could not
	// reach the provider, in its own words — Cursor "We're having trouble
	// connecting to the model provider", "We had a problem reaching
	// OpenAI", "There was a problem communicating with the model
	// provider", "Could not reach the Anthropic API", "Unable to reach
	// api.openai.com".
	newShape("trouble_connecting", []string{"connecting", "reaching", "contacting", "communicating"},
		32, `\b(?:trouble|problems?|issues?|difficult(?:y|ies)|errors?|failures?|failed)\s+(?:(?:when|while)\s+)?`,
		16, `(?:connecting|reaching|contacting|communicating)\b`).leftWith("trouble", "problem", "issue", "difficult", "error", "fail"),
	// Chrome's "TypeError: Failed to fetch" inside a wrapper ("[TypeError:
	// Failed to fetch]"): the words end there.
	newShape("failed_to_fetch", []string{"failed to fetch"}, 0, "", 24, `failed to fetch(?:\s*[\]\)"'.,;]|\s*$)`),
	newShape("cannot_reach", []string{"reach", "contact"},
		24, `\b(?:unable|failed|could not|couldn(?:'|’)t|cannot|can(?:'|’)t|can not|not able)\s+(?:to\s+)?`,
		12, `(?:reach|contact)\b`).leftWith("unable", "fail", "could", "can", "not able"),
	newTable("transport_words",
		"closed unexpectedly", "disconnected unexpectedly", "reset unexpectedly", "terminated unexpectedly",
		"closed by peer", "reset by peer", "closed by the remote", "closed by remote", "without sending a response",
		"without sending complete message", "remotedisconnected", "remoteprotocolerror", "serverdisconnectederror",
		"clientconnectorerror", "clientoserror", `\bconnecterror\b`, `\breaderror\b`, "incompleteread", "incomplete chunked read",
		"response payload is not completed", "connection broken", "connection aborted", "connection refused",
		"broken pipe", "unexpected eof", "unexpected end of stream", "use of closed network connection",
		"server closed idle connection", "sent goaway", "empty reply from server", "transfer closed with outstanding",
		"recv failure", "error sending request", "error trying to connect", "failed to establish a new connection",
		"cannot connect to host", "all connection attempts failed", "unable to connect", "failed to connect", "could not connect",
		"no such host", "name resolution", "getaddrinfo", "network is unreachable", "no route to host", "dns error", `: eof\b`,
		"error occurred while sending the request", "response ended prematurely", "ended prematurely", "premature close",
		"incompletemessage", "connection closed before message completed",
		"networkerror when attempting to fetch", "apiconnectionerror", "apitimeouterror", // Firefox; OpenAI/LiteLLM SDK classes
		"连接被重置", "连接已关闭", "连接中断", "连接断开", "连接失败", "网络连接",
	),
}

// closedByError: what follows a closure that names a provider error as
// its cause (see stream_closed).
var closedByError = []string{"due to error", "due to an error", "because of an error", "because of error", "with error from", "by error from"}

var timeoutBare = map[string]bool{
	// fledger (issue 17 second blind set): the browsers' fetch failures,
	// whole (Chrome "TypeError: Failed to fetch", Safari "Load failed").
	"failed to fetch": true, "load failed": true,
	"terminated": true, "stream_read_error": true, "request failed": true, "llm request failed": true,
}

// emptyResponse: a reply with no usable output. fledger (RE-131: the
// claude-cli backend's "cli empty response diagnostics"); sibling wording
// from OpenAI-compatible servers.
var emptyResponsePhrases = newTable("empty_response",
	"empty response",
	"no content in response", "response contained no content", "response has no content", "no choices in response", // fledger
	"returned an empty response",
	"no response content",
	"response was empty",
	// fledger (issue 17 second blind set): Cline "The language model did
	// not provide any assistant messages", "Model returned no content".
	"did not provide any assistant message", "no assistant message", "returned no content", "returned no output", "produced no output",
	"empty completion",
	// fledger (issue 17 third blind set): a stream or reply with nothing
	// usable — Cline "The provider returned an empty or unparsable
	// response", Gemini CLI "Model stream ended with an invalid chunk or
	// missing finish reason", LangChain "No generations found in stream".
	"empty or unparsable response", "empty or invalid response", "no generations found", "no generation chunks",
	"stream ended with an invalid chunk", "missing finish reason", "without a finish reason", "no finish reason",
	"model output is empty", "model returned an empty", "returned empty content", "response is empty", "empty reply",
	"no candidates returned", "response contained no candidates", "no completion choices",
)

// tls: certificate verification failures, Node codes and Go/Python text
// (ref §1 "tls_certificate"; ref §2.1 step 4).
var tlsPhrases = newTable("tls",
	"certificate has expired", "cert_has_expired",
	"self signed certificate", "self-signed certificate", "self_signed_cert_in_chain", "depth_zero_self_signed_cert",
	"unable to verify the first certificate", "unable_to_verify_leaf_signature",
	"unable to get local issuer certificate", "unable_to_get_issuer_cert",
	"err_tls_cert_altname_invalid", "does not match certificate's altnames",
	"x509: certificate", "tls: failed to verify certificate", "certificate signed by unknown authority",
	"certificate verify failed", "certificate_verify_failed", "sslcertverificationerror",
	"cert_not_yet_valid", "cert_untrusted", "certificate is not valid for",
)

// openRouter: the OpenRouter plugin (ref §2.6).
var openRouterKeyLimit = newTable("openrouter_key_limit", "key limit exceeded", "key limit reached", "key limit hit", "api key budget limit")

// xAI: the xAI plugin (ref §2.6). The shipped regexes were not extracted;
// these follow the documented intent: credits/spending limit → billing.
var xaiBillingRe = newPattern("xai_billing",
	`\bcredits?\b|spending[ _\-:]?limit|licenses`, "credit", "spending", "licenses")
var xaiRateRe = newPattern("xai_rate", `rate limit|too many requests`, "rate limit", "too many requests")
var xaiInternal = newTable("xai_internal", "internal error", "internal server error")

// refusal: final provider refusals; the turn stops (POLICY disposition
// "refusal"; seed 000 "final provider refusals").
var refusalPhrases = newTable("refusal",
	"content_filter",                            // Azure OpenAI code (RE-067, RE-068)
	"content management policy",                 // Azure
	"responsibleaipolicyviolation",              // Azure innererror
	"content_policy_violation",                  // OpenAI images
	"rejected as a result of our safety system", // OpenAI
	"guardrail intervened",                      // Bedrock Guardrails
	"violate our usage policy",                  // Anthropic Claude Code refusals
	"violates our usage policy",
	`"stop_reason":"refusal"`, // Anthropic
	// fledger (issue 17 family 7): providers' moderation blocks.
	"content exists risk",                                         // DeepSeek 400 "Content Exists Risk"
	"may contain inappropriate content",                           // DashScope DataInspectionFailed "Input data may contain inappropriate content"
	"containinappropriate content",                                // the same, as Dify prints it
	"contains inappropriate content",                              // Novita ILLEGAL_PROMPT
	"unsafe or sensitive content",                                 // Zhipu 1301 (English)
	"sensitive content in input",                                  //
	"considered high risk",                                        // Moonshot content_filter "The request was rejected because it was considered high risk"
	"safety_check_failed",                                         // gateways: upstream safety policy triggered
	"sensitive_words_detected", "prompt_blocked", "new_sensitive", // one-api gateways; MiniMax 1026/1027
	"不安全或敏感内容", "敏感内容", "违规内容", "内容违规", "敏感词", "内容安全审核", "不适当的内容", // Chinese providers
	"不適切なコンテンツ", // Japanese
)

// refusalBlockRe: Gemini's block and finish reasons written as text:
// "block_reason: SAFETY", "finishReason": "PROHIBITED_CONTENT", the Python
// SDK's enum reprs "BlockedReason.PROHIBITED_CONTENT" and
// "FinishReason.SAFETY" (an app's "Request was blocked by Gemini:
// BlockedReason.PROHIBITED_CONTENT"), and "Response was blocked due to
// SAFETY". BlockedReason.OTHER is not a refusal (RE-153: empty_response).
// Vertex's SDK prints the FinishReason number: "Finish reason: 3" is
// SAFETY (4 RECITATION, 6 BLOCKLIST, 7 PROHIBITED_CONTENT, 8 SPII).
// RECITATION is the provider's filter blocking the output for this request
// (fledger, issue 17 third blind set: "Candidate was blocked due to
// RECITATION"), a final provider refusal like SAFETY.
var refusalBlockRe = newPattern("refusal_block",
	`(?:block[_ ]?reason|finish[_ ]?reason)\W{0,20}?(?:blockedreason\.|blockreason\.|finishreason\.)?`+geminiBlockAlt+`\b|\b(?:blockedreason|blockreason|finishreason)\.`+geminiBlockAlt+`\b|\bblocked (?:due to|because of|for)(?: reason)?\W{0,3}`+geminiBlockAlt+`\b|\bfinish[_ ]?reason\W{1,3}[34678]\b`,
	"block_reason", "blockreason", "block reason", "blockedreason", "finish_reason", "finishreason", "finish reason", "blocked due to", "blocked because of", "blocked for").
	and("safety", "prohibited_content", "blocklist", "spii", "recitation", "reason: 3", "reason: 4", "reason: 7", "reason: 8", "reason: 6", "reason:3", "reason=3")

// geminiBlockAlt: the Gemini BlockedReason / FinishReason values that are a
// safety block (ai.google.dev/api/generate-content: SAFETY, BLOCKLIST,
// PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, IMAGE_PROHIBITED_CONTENT).
const geminiBlockAlt = `(?:safety|prohibited_content|blocklist|spii|image_safety|image_prohibited_content|recitation)`

// refusalLexicon: how providers word a moderation block, as a family
// (fledger, issue 17 blind set): an action of refusing (rejected, blocked,
// flagged, filtered, refused, triggered, violates, not allowed by …) next to
// the thing that refuses (safety system, safety filters, safeguards, safety
// measures, content policy, content filter, moderation, usage policies,
// Responsible AI, guardrails), in either order, within a short window:
//
//   - OpenAI "Your request was rejected by the safety system …
//     safety_violations=[sexual]" (code moderation_blocked), "Your prompt
//     may contain text that is not allowed by our safety system", "Your
//     prompt was flagged as potentially violating our usage policy";
//   - Anthropic "… has safety measures that flagged this message", "Opus's
//     safeguards flagged this message", "Output blocked by content
//     filtering policy";
//   - Google "blocked by Gemini's safety filters", Vertex Imagen "This
//     prompt contains sensitive words that violate Google's Responsible AI
//     practices";
//   - xAI "Generated image rejected by content moderation"; Cohere "this
//     request triggered our safety filters";
//   - Chinese providers: 内容安全, 安全审核, 审核未通过, 涉嫌违规, 含有敏感
//     …, iFlytek Spark "输入内容审核不通过，涉嫌违规", Baidu "输入内容包含敏感
//     信息".
//
// Unlike refusalPhrases, a lexicon match does not make a refusal of an
// error whose reason is an account or quota condition (rate_limit, billing,
// auth, …: "account suspended for violating our usage policies" is not a
// refused prompt); see refusal in classify.go.
var refusalLexicon = []finder{
	newSeq("refusal_agent_acts", 24,
		refusalAgents,
		[]string{"flagged", "blocked", "rejected", "triggered", "filtered", "refused", "declined", "prevented", "intervened", "stopped"}),
	newSeq("refusal_act_by", 48,
		[]string{"rejected", "blocked", "flagged", "filtered", "refused", "declined", "triggered", "triggering", "violat", "not allowed by", "prohibited by", "denied by", "against"},
		refusalAgents),
	// "Your input was flagged for harassment" (OpenRouter moderation, 403),
	// "The response was filtered", "All images were filtered out": what was
	// refused, then the act. A bare "was blocked" is not enough: Gemini's
	// "Response was blocked due to OTHER" is no safety block
	// (refusalBlockRe reads the SAFETY-class reasons and RECITATION).
	newSeq("refused_subject", 14,
		[]string{"input", "prompt", "content", "message", "output", "response", "image", "completion", "generation", "request", "conversation", "query"},
		[]string{"was flagged", "were flagged", "has been flagged", "is flagged", "got flagged",
			"was filtered", "were filtered", "has been filtered", "was censored", "was moderated"}),
	newTable("refusal_lexicon",
		"requires moderation", "flagged_input", "flagged for moderation",
		"safety_violations", "safety violation", "content policy violation", "usage policy violation", "moderation_blocked",
		"content_policy", "responsible_ai_policy", "sensitive words", "sensitive content", "sensitivecontentdetected",
		"inappropriate content", "harmful content", "unsafe content", "unsafe prompt", "potentially unsafe",
		`"filtered":true`, `"filtered": true`, `"blocked":true`, `"blocked": true`, `\bblocked: true`, "blocked=true",
		"raifilteredreason", "rai_filtered_reason", "may contain sensitive", "contains sensitive information",
		// Chinese providers (simplified and traditional).
		"内容安全", "安全审核", "内容审核", "审核未通过", "未通过审核", "审核不通过", "未通过安全", "违反安全",
		"涉嫌违规", "涉及违规", "包含违规", "含有违规", "存在违规", "违规信息", "违法违规", "违反相关", "内容不合规",
		"涉及敏感", "包含敏感", "含有敏感", "存在敏感", "敏感信息", "敏感话题", "不当内容", "有害内容", "内容存在风险", "风险内容",
		"安全拦截", "内容拦截", "內容安全", "敏感內容", "違規內容", "內容違規", "内容不合法", "政治敏感", "敏感问题",
	),
}

// refusalAgents: what refuses, in providers' words.
var refusalAgents = []string{
	"safety system", "safety filter", "safety polic", "safety measure", "safety setting", "safety check", "safety guideline",
	"safety standard", "safety reason", "safeguard", "content polic", "content filter", "content moderation", "moderation",
	"usage polic", "usage guideline", "acceptable use", "responsible ai", "trust and safety", "trust & safety",
	"content safety", "guardrail", "content management polic",
}

// accountBlock: an account or key suspended for a policy reason is an
// account condition, not a refused prompt (the lexicon stays out).
var accountBlock = []finder{
	newSeq("account_block", 40,
		[]string{"account", "organization", "organisation", "api key"},
		[]string{"suspended", "banned", "terminated", "disabled", "deactivated", "revoked", "blocked"}),
	newSeq("access_terminated", 12, []string{"access"}, []string{"terminated", "revoked", "suspended", "banned"}), // Kimi access_terminated_error
}

// wordBounded concatenates phrase lists and asks for word boundaries on
// both sides of each.
func wordBounded(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, p := range l {
			out = append(out, `\b`+p+`\b`)
		}
	}
	return out
}
