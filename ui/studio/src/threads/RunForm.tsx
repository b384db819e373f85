/** Starts a run with any input and config, the chosen stream modes and multitask strategy. */
import { useState } from "react";
import { parseJson } from "../Json.tsx";
import type { StartOptions } from "../useRunStream.ts";

export const STREAM_MODES = ["values", "updates", "messages-tuple", "messages", "custom", "events", "debug", "tasks", "checkpoints"];
const DEFAULT_INPUT = JSON.stringify({ messages: [{ role: "user", content: "Hello" }] }, null, 2);

interface Props {
  busy: boolean;
  onStart: (o: Omit<StartOptions, "threadId" | "assistantId">) => void;
}

export function RunForm({ busy, onStart }: Props) {
  const [input, setInput] = useState(DEFAULT_INPUT);
  const [config, setConfig] = useState("");
  const [modes, setModes] = useState<string[]>(["updates", "messages-tuple", "tasks"]);
  const [strategy, setStrategy] = useState<StartOptions["multitaskStrategy"]>("reject");
  const [error, setError] = useState<string | null>(null);
  const submit = () => {
    try {
      onStart({
        input: parseJson(input, "Input") ?? null,
        config: parseJson(config, "Config") as Record<string, unknown> | undefined,
        streamModes: modes,
        multitaskStrategy: strategy,
      });
      setError(null);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form className="card run-form" data-testid="run-form" onSubmit={(e) => (e.preventDefault(), submit())}>
      <h3>Start a run</h3>
      <label>Input (JSON)<textarea rows={5} value={input} onChange={(e) => setInput(e.target.value)} data-testid="run-input" /></label>
      <label>Config (JSON, optional)<textarea rows={2} value={config} placeholder='{"configurable": {}}' onChange={(e) => setConfig(e.target.value)} /></label>
      <fieldset className="modes">
        <legend>Stream modes</legend>
        {STREAM_MODES.map((m) => (
          <label key={m} className="check">
            <input type="checkbox" checked={modes.includes(m)} onChange={(e) => setModes(e.target.checked ? [...modes, m] : modes.filter((x) => x !== m))} /> {m}
          </label>
        ))}
      </fieldset>
      <label className="field-inline">
        Multitask{" "}
        <select value={strategy} onChange={(e) => setStrategy(e.target.value as StartOptions["multitaskStrategy"])}>
          {["reject", "interrupt", "rollback", "enqueue"].map((s) => <option key={s}>{s}</option>)}
        </select>
      </label>
      {error && <p className="banner error" role="alert">{error}</p>}
      <button type="submit" disabled={busy} data-testid="run-start">Start run</button>
    </form>
  );
}
