/**
 * Sign-in to this page's own server with the deployment's identity provider, as the chat UI at
 * `/app` does: the server injects its auth settings (`#agentcli-studio-settings`) and serves the
 * identity plugin's browser module at `/studio/auth-driver.js`; the same driver (`ui/src/auth`)
 * keeps the session, so a developer signed in at `/app` is signed in here too. Without a
 * module (no `[auth]`, the platform API key, `dev`'s bypass) there is no sign-in: the
 * connection form's key or token is used.
 */
import { useEffect, useRef, useSyncExternalStore } from "react";
import type { AuthDriver, AuthSnapshot } from "../../src/auth/driver.ts";
import { pluginDriver } from "../../src/auth/plugin.ts";
import type { AuthSettings } from "../../src/settings.ts";

/** Reads the injected settings' auth; null when the server gave none (another server, `vite dev`). */
export function readStudioAuth(): AuthSettings | null {
  const el = document.getElementById("agentcli-studio-settings");
  if (!el?.textContent) return null;
  try {
    const parsed = JSON.parse(el.textContent) as { auth?: AuthSettings };
    return parsed.auth && typeof parsed.auth.provider === "string" ? parsed.auth : null;
  } catch {
    return null;
  }
}

/** The identity plugin's driver when this server has a sign-in module, else null. */
export function studioDriver(auth: AuthSettings | null): AuthDriver | null {
  return auth?.module ? pluginDriver({ ...auth, module: auth.module }, `${location.origin}/studio/`) : null;
}

const SIGNED_IN: AuthSnapshot = { status: "signed_in", user: null, message: null };
const noSubscribe = () => () => {};

/** The driver's snapshot (always signed in without a driver). */
export function useSession(driver: AuthDriver | null): AuthSnapshot {
  return useSyncExternalStore(driver ? driver.subscribe : noSubscribe, driver ? driver.snapshot : () => SIGNED_IN);
}

/** The sign-in card: the identity plugin's own screen, drawn by its module; an error when it cannot start. */
export function SignIn({ driver, snapshot }: { driver: AuthDriver; snapshot: AuthSnapshot }) {
  const host = useRef<HTMLDivElement>(null);
  const signedOut = snapshot.status === "signed_out";
  useEffect(() => {
    const el = host.current;
    if (!el || !signedOut || !driver.mountSignIn) return;
    const unmount = driver.mountSignIn(el);
    return () => {
      unmount();
      el.replaceChildren();
    };
  }, [driver, signedOut]);
  return (
    <div className="auth-page">
      <div className="auth-card" data-testid="studio-sign-in">
        <h1>agentcli studio</h1>
        <p className="muted">Sign in with this deployment's identity provider ({driver.provider}).</p>
        {snapshot.status === "loading" && <p className="muted" role="status">Loading sign-in…</p>}
        {snapshot.status === "error" && (
          <p className="banner error" role="alert" data-testid="auth-load-error">Sign-in is unavailable: {snapshot.message}</p>
        )}
        {signedOut && snapshot.message && <p className="auth-info" role="status">{snapshot.message}</p>}
        <div ref={host} className="sign-in-host" data-testid="sign-in" />
      </div>
    </div>
  );
}
