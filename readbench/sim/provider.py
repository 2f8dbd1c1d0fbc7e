"""``SimAgentAPI``: the simulated agent as an inspect-ai model provider (``readbench/<profile>``).

docs/specs/sim-agent.md; registered by readbench/_registry.py (``@modelapi(name="readbench")``),
so ``--model readbench/sim-mixed`` works wherever ``anthropic/...`` would. Per call it:
1. reads the task oracle (store ``readbench:oracle``) and its own memory (store ``readbench:sim``);
2. counts the request's prompt tokens and, above the profile's context window, returns a
   ``model_length`` output with metadata ``{"context_overflow": True}`` and no tool call;
3. otherwise decides one action from the CURRENT input only (readbench.sim.policy) — a real
   harness's request is first put in pi's names and result texts and the action back in the
   harness's tool shapes (readbench.sim.dialect); a dialect may instead ask to poll a command still
   running (its context's ``wait``: no decision, the plan untouched) — and returns it with ``usage``
   and simulated timestamps in ``metadata``
   (``sim_ts_start_seconds``, ``sim_ts_first_token_seconds``, ``sim_ts_end_seconds``).
Determinism: the seed is (task_id, epoch, profile), never the arm; tool-call ids derive from
the seed and the call count. With ``temperature > 0`` in the call's GenerateConfig each call also
draws from a fresh nonce (readbench.sim.sampling: a sampled model, not paired across arms). Inspect never reaches tiktoken: ``count_text_tokens`` is local
(docs/specs/inspect-notes.md §9, item 1) and ``usage`` is always set.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo
from inspect_ai.util import Store, store

from readbench.sim.dialect import dialect_for
from readbench.sim.draws import sample_seed
from readbench.sim.latency import call_times, gap_seconds
from readbench.sim.memory import SIM_KEY, SimMemory, call_id
from readbench.sim.observe import default_read_limit, exchanges
from readbench.sim.oracle import ORACLE_KEY, TaskOracle, parse_oracle
from readbench.sim.policy import decide
from readbench.sim.profiles import get_mixture, get_profile, parse_overrides
from readbench.sim.prose import compose
from readbench.sim.sampling import call_draws, call_nonce
from readbench.sim.tokens import count_tokens, output_tokens, request_tokens

__all__ = ["SimAgentAPI", "choose_profile"]


def choose_profile(model_name: str, task_id: str, epoch: int, nonce: str | None = None) -> str:
    """The plain profile a sample runs: ``model_name`` itself, or for a mixture one member drawn
    with the mixture's weights from the seed (task_id, epoch, mixture name), and from ``nonce``
    too in sampled mode (readbench.sim.sampling; None: deterministic).

    Raises:
        ValueError: ``model_name`` is neither a profile nor a mixture.
    """
    mixture = get_mixture(model_name)
    if mixture is None:
        get_profile(model_name)  # raises for an unknown name
        return model_name
    return call_draws(sample_seed(task_id, epoch, model_name), nonce).weighted(mixture.weights, "profile")


class SimAgentAPI(ModelAPI):
    """The behaviour-model provider. ``model_name`` is a profile or mixture name (``sim-pager``,
    ``sim-mixed``); ``-M knob=value`` model args override profile knobs (readbench.sim.profiles).

    Raises:
        ValueError: unknown profile name or invalid knob override (at construction).
    """

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, api_key_vars=[],
                         config=config or GenerateConfig())
        self._overrides = parse_overrides(model_args)
        if get_mixture(model_name) is None:
            get_profile(model_name, self._overrides)

    def max_tokens(self) -> int | None:
        """No output cap of its own (replies are short)."""
        return None

    async def count_text_tokens(self, text: str) -> int:
        """Offline o200k count (never tiktoken's download)."""
        return count_tokens(text)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,  # noqa: A002 - ModelAPI
                       config: GenerateConfig) -> ModelOutput:
        """Answer one call from the projected ``input`` (see the module docstring).

        ``config`` is inspect's merged GenerateConfig of this call: ``temperature > 0`` samples
        (readbench.sim.sampling).

        Raises:
            ValueError: the sample store has no readbench oracle.
        """
        return generate_in_store(store(), self.model_name, self._overrides, input, tools, tool_choice, config)


def _load_memory(st: Store, model_name: str, oracle: TaskOracle, nonce: str | None) -> SimMemory:
    raw = st.get(SIM_KEY)
    if raw is not None:
        return SimMemory.from_dict(raw)
    profile = choose_profile(model_name, oracle.task_id, oracle.epoch, nonce)
    return SimMemory(profile=profile, seed=sample_seed(oracle.task_id, oracle.epoch, profile))


def generate_in_store(st: Store, model_name: str, overrides: dict[str, Any], input: list[ChatMessage],  # noqa: A002
                      tools: list[ToolInfo], tool_choice: ToolChoice = "auto",
                      config: GenerateConfig | None = None) -> ModelOutput:
    """The provider's work on an explicit store (pure apart from ``st``; used by tests and tools).

    Args:
        st: the sample store (holds ``readbench:oracle``; ``readbench:sim`` is read and written).
        model_name: profile or mixture name.
        overrides: validated knob overrides.
        input: the message list of this call (already projected by the loop).
        tools: the tools offered in this call.
        tool_choice: inspect's tool choice; ``"none"`` means no tool may be called.
        config: the call's GenerateConfig; ``temperature > 0`` draws this call's decisions from a
            fresh nonce (readbench.sim.sampling), None or temperature 0 keeps them seeded.
    """
    oracle = parse_oracle(st.get(ORACLE_KEY))
    nonce = call_nonce(config)
    mem = _load_memory(st, model_name, oracle, nonce)
    profile = get_profile(mem.profile, overrides)
    draws = call_draws(mem.seed, nonce)
    dialect = dialect_for(tools)  # a real harness's tools (readbench.sim.dialect): perceive and act in pi's
    view = dialect.to_sim(input, tools) if dialect is not None else None
    seen, offered = (view.messages, view.tools) if view is not None else (input, tools)
    users = sum(isinstance(m, ChatMessageUser) for m in seen)
    step_index = min(max(users, 1), len(oracle.goals)) - 1
    previous_goal = oracle.goals[min(mem.step.index, len(oracle.goals) - 1)]
    start = mem.clock_seconds + gap_seconds(profile, mem.last_calls, previous_goal.test_cmd,
                                            new_prompt=mem.calls > 0 and step_index != mem.step.index)
    prompt = request_tokens(input, tools)
    mem.calls += 1
    ident = call_id(mem.seed, mem.calls)
    meta: dict[str, Any] = {"sim_profile": profile.name}
    if prompt > profile.context_window_tokens:
        times = call_times(profile, start, prompt, 0)
        message = ChatMessageAssistant(id=f"{ident}-msg", content="", model=model_name, source="generate")
        choice = ChatCompletionChoice(message=message, stop_reason="model_length")
        mem.last_calls, mem.clock_seconds = [], times.end_seconds
        st.set(SIM_KEY, mem.to_dict())
        return ModelOutput(model=model_name, choices=[choice],
                           usage=ModelUsage(input_tokens=prompt, output_tokens=0, total_tokens=prompt),
                           metadata={**times.metadata(), **meta, "context_overflow": True})
    wait = view.context.get("wait") if view is not None else None
    if wait is not None:  # the harness's own mechanics, no decision: poll a command still running (Codex)
        function, arguments = wait
        text = "Waiting for the command to finish."
    else:
        tool_names = frozenset() if tool_choice == "none" else frozenset(t.name for t in offered)
        read_limit = next((default_read_limit(t.description) for t in offered if t.name == "read"), None)
        action = decide(exchanges(seen), users, oracle.goals, profile, draws, mem, tool_names, read_limit)
        function, arguments = action.function, action.arguments
        if dialect is not None and view is not None and function:
            function, arguments = dialect.from_sim(function, arguments, view.context)
        low, high = profile.think_tokens
        text = compose(action.intent, draws.integer(low, high, "think", mem.calls), draws, "prose", mem.calls)
        if action.answer is not None:
            text = f"{text}\n\nANSWER: {action.answer}"
    calls = [ToolCall(id=ident, function=function, arguments=arguments)] if function else None
    out = output_tokens(text, function, arguments)
    times = call_times(profile, start, prompt, out)
    message = ChatMessageAssistant(id=f"{ident}-msg", content=text, tool_calls=calls, model=model_name,
                                   source="generate")
    choice = ChatCompletionChoice(message=message, stop_reason="tool_calls" if calls else "stop")
    if wait is None:  # a poll leaves the plan as it was: the polled call's result is absorbed when it is complete
        mem.last_calls = [{"id": ident, "function": action.function, "arguments": action.arguments}] if calls else []
    mem.clock_seconds = times.end_seconds
    st.set(SIM_KEY, mem.to_dict())
    return ModelOutput(model=model_name, choices=[choice],
                       usage=ModelUsage(input_tokens=prompt, output_tokens=out, total_tokens=prompt + out),
                       metadata={**times.metadata(), **meta, "sim_phase": mem.step.phase})
