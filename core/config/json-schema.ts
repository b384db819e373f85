/**
 * The JSON Schema of `agent.toml`, generated from the same zod schema the validator uses,
 * with the built-in provider names offered as completions.
 */
import { z } from "zod";
import { agentTomlSchema } from "./schema.ts";
import type { PluginDriver } from "../kernel/index.ts";

export function agentTomlJsonSchema(driver: PluginDriver, version: string): Record<string, unknown> {
  const schema = z.toJSONSchema(agentTomlSchema, { io: "input", target: "draft-7" }) as Record<string, any>;
  const props = schema.properties;
  const suggest = (values: string[]) => ({ anyOf: [{ enum: values }, { type: "string" }] });
  Object.assign(props.sandbox.properties.provider, suggest(driver.specs("sandbox").map((s) => s.provider)));
  delete props.sandbox.properties.provider.type;
  Object.assign(
    props.auth.properties.provider,
    suggest(driver.specs("identity").map((s) => s.provider).filter((p) => p !== "platform_key")),
  );
  delete props.auth.properties.provider.type;
  props.agent.properties.model.examples = driver.specs("model").map((s) => `${s.prefix}:${s.defaultModel}`);
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    $id: `https://unpkg.com/agentcli@${version}/schema/agent.schema.json`,
    title: "agent.toml",
    description: "Configuration of an agentcli agent project: [agent] (required), [sandbox], [auth], [frontend].",
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$schema")),
  };
}
