#!/bin/sh
# The fake `claude` of the cluster fault scenarios (POSIX sh, ~1 MB a process): its conversation is the transcript
# store's. Like the real CLI it keeps its transcript in its config dir ($CLAUDE_CONFIG_DIR/projects/<project>/<session
# id>.jsonl, which the runner loads from the store before a resume) and reports each entry it writes there in a
# `transcript_mirror` frame (the runner appends it to the store). Each prompt carries a token `P:<token>:P`; a turn
# runs a "tool" (`sleep`, in a session of its own like the real Bash tool), writes one entry holding the token, logs
# `ran <runner pid> <session id> <token>` to $ECA_STRESS_EVENTS, and answers `<runner pid>|<every token of its
# transcript, in order>`.
case " $* " in *" --version "*) echo "2.1.332 (Claude Code)"; exit 0 ;; esac
S=5c6f6e3a-0000-4000-8000-00000000be4c
prev=
for a in "$@"; do
  case "$a" in
    --session-id=*|--resume=*) S=${a#*=} ;;
  esac
  case "$prev" in --session-id|--resume) S=$a ;; esac
  prev=$a
done
D="$CLAUDE_CONFIG_DIR/projects/$ECA_STRESS_PROJECT"
F="$D/$S.jsonl"
mkdir -p "$D"
# a runner whose flag file exists runs long tools (120 s, or until $ECA_STRESS_RELEASE exists): its CLIs are
# mid-turn when the fault comes
T=${ECA_STRESS_TOOL_SECONDS:-0.05}
TOOL=
command -v setsid >/dev/null 2>&1 && TOOL=setsid
INIT='{"commands":[],"agents":[],"models":[{"value":"default","displayName":"Default","description":"The default model","resolvedModel":"claude-fake-stress"}],"account":{"tokenSource":"none","apiKeySource":"ANTHROPIC_API_KEY","apiProvider":"firstParty"},"output_style":"default","available_output_styles":["default"],"claude_code_version":"2.1.332","current_permission_mode":"default"}'
USAGE='{"input_tokens":10,"output_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"service_tier":"standard"}'
n=0
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
      rest=${line#*P:}
      p=${rest%%:P*}
      n=$((n + 1))
      if [ -n "$ECA_STRESS_SLOW_FLAG" ] && [ -e "$ECA_STRESS_SLOW_FLAG" ]; then
        $TOOL sleep 120 &
        tool=$!
        i=0
        while [ "$i" -lt 2400 ] && ! { [ -n "$ECA_STRESS_RELEASE" ] && [ -e "$ECA_STRESS_RELEASE" ]; }; do
          sleep 0.05
          i=$((i + 1))
        done
        kill "$tool" 2>/dev/null
        wait "$tool"
      else
        $TOOL sleep "$T"
      fi
      entry='{"type":"stress","uuid":"'$p-$$-$n'","token":"'$p'"}'
      printf '%s\n' "$entry" >> "$F"
      printf 'ran %s %s %s\n' "$PPID" "$S" "$p" >> "$ECA_STRESS_EVENTS"
      hist=
      while IFS= read -r x; do
        r=${x#*\"token\":\"}
        hist="$hist ${r%%\"*}"
      done < "$F"
      text="$PPID|${hist# }"
      printf '%s\n' \
        '{"type":"transcript_mirror","filePath":"'"$F"'","entries":['"$entry"']}' \
        '{"type":"system","subtype":"init","cwd":"/tmp","session_id":"'$S'","tools":["Bash"],"mcp_servers":[],"model":"claude-fake-stress","permissionMode":"default","slash_commands":[],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.332","output_style":"default","agents":[],"skills":[],"plugins":[],"uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0d'$((1000 + n))'"}' \
        '{"type":"assistant","message":{"id":"msg_'$n'","type":"message","role":"assistant","model":"claude-fake-stress","content":[{"type":"text","text":"'"$text"'"}],"stop_reason":null,"stop_sequence":null,"usage":'"$USAGE"'},"parent_tool_use_id":null,"session_id":"'$S'","uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0e'$((1000 + n))'"}' \
        '{"type":"result","subtype":"success","is_error":false,"result":"'"$text"'","duration_ms":1,"duration_api_ms":1,"num_turns":1,"session_id":"'$S'","uuid":"0b7c0000-6a3e-4c1d-9f5e-3b2a1c0f'$((1000 + n))'","stop_reason":"end_turn","total_cost_usd":0,"usage":'"$USAGE"',"modelUsage":{},"permission_denials":[]}' ;;
  esac
done
exit 0
