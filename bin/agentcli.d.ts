// bin/agentcli.js runs the CLI when it is imported (tests/platform/_held-serve.ts does): it exports nothing.
export {};
