/**
 * The Agent API client for this page's origin: every request carries a fresh
 * `Authorization: Bearer` token from the auth driver, and a 401 hands control back to
 * sign-in.
 */
import { Client } from "@langchain/langgraph-sdk";
import type { AuthDriver } from "./auth/driver.ts";

/** Creates the SDK client bound to the page origin and the auth driver. */
export function createApiClient(auth: AuthDriver, onNetwork: (online: boolean) => void): Client {
  const authFetch: typeof fetch = async (input, init) => {
    let res: Response;
    try {
      res = await fetch(input, init);
    } catch (err) {
      if (!(err instanceof DOMException && err.name === "AbortError")) onNetwork(false);
      throw err;
    }
    onNetwork(true);
    if (res.status === 401 && auth.mountSignIn) {
      auth.expire("Your session has expired. Sign in again to continue.");
    }
    return res;
  };
  return new Client({
    apiUrl: location.origin,
    apiKey: null,
    callerOptions: { fetch: authFetch, maxRetries: 1 },
    async onRequest(_url, init) {
      const token = await auth.token();
      if (!token) return init;
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${token}`);
      return { ...init, headers };
    },
  });
}
