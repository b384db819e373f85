/**
 * A local identity server speaking identity_a's browser-facing GoTrue protocol, with CORS as
 * the real one has, for the sign-in tests: `POST /auth/v1/signup` (auto-confirmed: returns a
 * session), `POST /auth/v1/token?grant_type=password|refresh_token`, `GET|PUT /auth/v1/user`,
 * `POST /auth/v1/logout`, `POST /auth/v1/recover` (records the email it would send).
 * Every call needs the publishable key in `apikey`.
 */
import { SignJWT, jwtVerify } from "jose";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface BrowserGoTrue {
  url: string;
  publishableKey: string;
  /** Emails a recovery link was requested for. */
  recoveries: string[];
  /** Access tokens signed out. */
  logouts: number;
  /** A session access token for an existing user (what a recovery link carries). */
  tokenFor(email: string): Promise<string>;
  passwordOf(email: string): string | undefined;
  close(): Promise<void>;
}

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "apikey, authorization, content-type, x-client-info",
  "access-control-allow-methods": "GET, POST, PUT, OPTIONS",
};

export async function startBrowserGoTrue(): Promise<BrowserGoTrue> {
  const secret = crypto.getRandomValues(new Uint8Array(32));
  const publishableKey = `sb_publishable_${crypto.randomUUID()}`;
  const users = new Map<string, { id: string; email: string; password: string }>();
  const refresh = new Map<string, string>();
  const revoked = new Set<string>();
  const state = { recoveries: [] as string[], logouts: 0 };

  const session = async (user: { id: string; email: string }) => {
    const now = Math.floor(Date.now() / 1000);
    const access = await new SignJWT({ email: user.email, role: "authenticated", aud: "authenticated", session_id: crypto.randomUUID() })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" }).setSubject(user.id).setIssuedAt(now).setExpirationTime(now + 3600).sign(secret);
    const rt = crypto.randomUUID();
    refresh.set(rt, user.email);
    return { access_token: access, token_type: "bearer", expires_in: 3600, expires_at: now + 3600, refresh_token: rt, user: { id: user.id, email: user.email, aud: "authenticated" } };
  };
  const userOf = async (req: Request) => {
    const m = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "");
    if (!m || revoked.has(m[1]!)) return null;
    try {
      const { payload } = await jwtVerify(m[1]!, secret, { algorithms: ["HS256"] });
      return [...users.values()].find((u) => u.id === payload.sub) ?? null;
    } catch {
      return null;
    }
  };
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...CORS } });

  const handle = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: CORS });
    if (req.headers.get("apikey") !== publishableKey) return json({ message: "Invalid API key" }, 401);
    const body = req.method === "POST" || req.method === "PUT" ? (await req.json().catch(() => ({}))) as Record<string, string> : {};
    if (req.method === "POST" && url.pathname === "/auth/v1/signup") {
      if (users.has(body.email!)) return json({ code: 422, error_code: "user_already_exists", msg: "User already registered" }, 422);
      if ((body.password ?? "").length < 6) return json({ code: 422, error_code: "weak_password", msg: "Password should be at least 6 characters." }, 422);
      const user = { id: crypto.randomUUID(), email: body.email!, password: body.password! };
      users.set(user.email, user);
      return json(await session(user));
    }
    if (req.method === "POST" && url.pathname === "/auth/v1/token") {
      const grant = url.searchParams.get("grant_type");
      if (grant === "password") {
        const user = users.get(body.email!);
        if (!user || user.password !== body.password) return json({ code: 400, error_code: "invalid_credentials", msg: "Invalid login credentials" }, 400);
        return json(await session(user));
      }
      if (grant === "refresh_token") {
        const email = refresh.get(body.refresh_token!);
        if (!email) return json({ code: 400, error_code: "refresh_token_not_found", msg: "Invalid Refresh Token: Refresh Token Not Found" }, 400);
        refresh.delete(body.refresh_token!);
        return json(await session(users.get(email)!));
      }
    }
    if (url.pathname === "/auth/v1/user") {
      const user = await userOf(req);
      if (!user) return json({ code: 401, error_code: "bad_jwt", msg: "invalid JWT" }, 401);
      if (req.method === "PUT" && body.password) user.password = body.password;
      return json({ id: user.id, aud: "authenticated", role: "authenticated", email: user.email, user_metadata: {}, app_metadata: { provider: "email" } });
    }
    if (req.method === "POST" && url.pathname === "/auth/v1/logout") {
      const m = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "");
      if (m) revoked.add(m[1]!);
      state.logouts++;
      return new Response(null, { status: 204, headers: CORS });
    }
    if (req.method === "POST" && url.pathname === "/auth/v1/recover") {
      state.recoveries.push(body.email!);
      return json({});
    }
    return json({ message: "not found" }, 404);
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const response = await handle(request);
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => { out[k] = v; });
    res.writeHead(response.status, out);
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    publishableKey,
    get recoveries() { return state.recoveries; },
    get logouts() { return state.logouts; },
    async tokenFor(email) {
      return (await session(users.get(email)!)).access_token;
    },
    passwordOf: (email) => users.get(email)?.password,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
