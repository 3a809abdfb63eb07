#!/bin/sh
# The smallest fake `claude` (POSIX sh, no subprocesses): answers `initialize`, replies to each prompt with a short
# turn, exits when stdin closes. Used where process start-up must not dominate (1,000 sequential sessions).
case " $* " in *" --version "*) echo "2.1.332 (Claude Code)"; exit 0 ;; esac
S=5c6f6e3a-0000-4000-8000-00000000be4c
# like the real CLI: the session id the SDK assigned, or the resumed one
prev=
for a in "$@"; do
  case "$a" in
    --session-id=*|--resume=*) S=${a#*=} ;;
  esac
  case "$prev" in --session-id|--resume) S=$a ;; esac
  prev=$a
done
INIT='{"commands":[{"name":"compact","description":"Clear conversation history but keep a summary","argumentHint":""}],"agents":[{"name":"general-purpose","description":"General-purpose agent"}],"models":[{"value":"default","displayName":"Default","description":"The default model","resolvedModel":"claude-fake-bench"}],"account":{"tokenSource":"none","apiKeySource":"ANTHROPIC_API_KEY","apiProvider":"firstParty"},"output_style":"default","available_output_styles":["default"],"claude_code_version":"2.1.332","current_permission_mode":"default"}'
USAGE='{"input_tokens":2417,"output_tokens":318,"cache_creation_input_tokens":0,"cache_read_input_tokens":19873,"service_tier":"standard"}'
while IFS= read -r line; do
  case "$line" in
    *'"type":"control_request"'*)
      rest=${line#*\"request_id\":\"}
      id=${rest%%\"*}
      case "$line" in
        *'"subtype":"initialize"'*) printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":%s}}\n' "$id" "$INIT" ;;
        *) printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{}}}\n' "$id" ;;
      esac ;;
    *'"type":"user"'*)
      printf '%s\n' \
        '{"type":"system","subtype":"session_state_changed","state":"running","sdk_host_only":true,"session_id":"'$S'","uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0d0001"}' \
        '{"type":"system","subtype":"init","cwd":"/tmp","session_id":"'$S'","tools":["Bash","Read"],"mcp_servers":[],"model":"claude-fake-bench","permissionMode":"default","slash_commands":["compact"],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.332","output_style":"default","agents":["general-purpose"],"skills":[],"plugins":[],"uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0d0002"}' \
        '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello from the fake"}},"session_id":"'$S'","parent_tool_use_id":null,"uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0d0003"}' \
        '{"type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-fake-bench","content":[{"type":"text","text":"Hello from the fake CLI."}],"stop_reason":null,"stop_sequence":null,"usage":'"$USAGE"'},"parent_tool_use_id":null,"session_id":"'$S'","uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0d0004"}' \
        '{"type":"result","subtype":"success","is_error":false,"result":"Hello from the fake CLI.","duration_ms":12,"duration_api_ms":10,"num_turns":1,"session_id":"'$S'","uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0d0005","stop_reason":"end_turn","total_cost_usd":0.001,"usage":'"$USAGE"',"modelUsage":{},"permission_denials":[]}' \
        '{"type":"system","subtype":"session_state_changed","state":"idle","sdk_host_only":true,"session_id":"'$S'","uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0d0006"}' ;;
  esac
done
exit 0
