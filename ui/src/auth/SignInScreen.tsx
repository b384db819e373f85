/** Sign-in screens: `identity_a` email/password forms, the `identity_b` widget, and auth errors. */
import { useEffect, useRef, useState } from "react";
import type { FormEvent, ReactNode } from "react";
import { Icon } from "../icons.tsx";
import type { IdentityADriver } from "./identity-a.ts";
import type { IdentityBDriver } from "./identity-b.ts";

function Shell({ appName, subtitle, children, themeButton }: { appName: string; subtitle: string; children: ReactNode; themeButton: ReactNode }) {
  return (
    <div className="auth-page">
      <div className="auth-corner">{themeButton}</div>
      <div className="auth-card">
        <div className="auth-brand">
          <span className="logo lg" aria-hidden><Icon name="sparkle" /></span>
          <h1>{appName}</h1>
          {subtitle && <p className="muted">{subtitle}</p>}
        </div>
        {children}
      </div>
    </div>
  );
}

type Mode = "sign_in" | "sign_up" | "recover";

/** Email/password sign-in, sign-up and password reset for `identity_a`. */
export function IdentityASignIn({ driver, message, appName, subtitle, themeButton }: {
  driver: IdentityADriver; message: string | null; appName: string; subtitle: string; themeButton: ReactNode;
}) {
  const [mode, setMode] = useState<Mode>("sign_in");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(message);
  const emailRef = useRef<HTMLInputElement>(null);
  useEffect(() => { emailRef.current?.focus(); }, [mode]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setInfo(null);
    try {
      if (mode === "sign_in") await driver.signIn(email.trim(), password);
      else if (mode === "sign_up") {
        if ((await driver.signUp(email.trim(), password)) === "confirm") {
          setInfo(`We sent a confirmation link to ${email.trim()}. Open it to finish signing up.`);
          setMode("sign_in");
        }
      } else {
        await driver.recover(email.trim());
        setInfo(`If an account exists for ${email.trim()}, a password reset link is on its way.`);
        setMode("sign_in");
      }
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const titles: Record<Mode, string> = { sign_in: "Sign in", sign_up: "Create your account", recover: "Reset your password" };
  return (
    <Shell appName={appName} subtitle={subtitle} themeButton={themeButton}>
      <form className="auth-form" onSubmit={submit} aria-labelledby="auth-title" data-testid="sign-in-form">
        <h2 id="auth-title">{titles[mode]}</h2>
        {info && <p className="auth-info" role="status">{info}</p>}
        {error && <p className="auth-error" role="alert" data-testid="auth-error">{error}</p>}
        <div className="field">
          <label htmlFor="email">Email</label>
          <input id="email" ref={emailRef} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        {mode !== "recover" && (
          <div className="field">
            <div className="field-row">
              <label htmlFor="password">Password</label>
              {mode === "sign_in" && <button type="button" className="link" onClick={() => { setMode("recover"); setError(null); }}>Forgot password?</button>}
            </div>
            <input id="password" type="password" autoComplete={mode === "sign_up" ? "new-password" : "current-password"} required
              minLength={mode === "sign_up" ? 6 : undefined} value={password} onChange={(e) => setPassword(e.target.value)} />
          </div>
        )}
        <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
          {busy && <span className="spinner" />}{mode === "sign_in" ? "Sign in" : mode === "sign_up" ? "Sign up" : "Send reset link"}
        </button>
        <p className="auth-switch muted">
          {mode === "sign_in" ? <>No account? <button type="button" className="link" onClick={() => { setMode("sign_up"); setError(null); }}>Sign up</button></>
            : <>Have an account? <button type="button" className="link" onClick={() => { setMode("sign_in"); setError(null); }}>Sign in</button></>}
        </p>
      </form>
    </Shell>
  );
}

/** After a recovery link: choose a new password. */
export function IdentityANewPassword({ driver, appName, subtitle, themeButton }: { driver: IdentityADriver; appName: string; subtitle: string; themeButton: ReactNode }) {
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try { await driver.updatePassword(password); } catch (err) { setError((err as Error).message); } finally { setBusy(false); }
  };
  return (
    <Shell appName={appName} subtitle={subtitle} themeButton={themeButton}>
      <form className="auth-form" onSubmit={submit}>
        <h2>Choose a new password</h2>
        {error && <p className="auth-error" role="alert">{error}</p>}
        <div className="field">
          <label htmlFor="new-password">New password</label>
          <input id="new-password" type="password" autoComplete="new-password" minLength={6} required autoFocus value={password} onChange={(e) => setPassword(e.target.value)} />
        </div>
        <button type="submit" className="btn btn-primary btn-block" disabled={busy}>{busy && <span className="spinner" />}Save password</button>
      </form>
    </Shell>
  );
}

/** The `identity_b` provider's own sign-in widget, mounted in our card. */
export function IdentityBSignIn({ driver, message, appName, subtitle, themeButton }: {
  driver: IdentityBDriver; message: string | null; appName: string; subtitle: string; themeButton: ReactNode;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => (host.current ? driver.mountSignIn(host.current) : undefined), [driver]);
  return (
    <Shell appName={appName} subtitle={subtitle} themeButton={themeButton}>
      {message && <p className="auth-info" role="status">{message}</p>}
      <div ref={host} className="widget-host" data-testid="identity-b-widget" />
    </Shell>
  );
}

/** Auth cannot start (e.g. the widget script did not load): say what and how to fix it. */
export function AuthError({ message, appName, subtitle, themeButton }: { message: string; appName: string; subtitle: string; themeButton: ReactNode }) {
  return (
    <Shell appName={appName} subtitle={subtitle} themeButton={themeButton}>
      <div className="notice notice-error" role="alert" data-testid="auth-load-error">
        <Icon name="alert" />
        <div className="notice-text">
          <strong>Sign-in is unavailable.</strong>
          <span>{message}</span>
          <span className="muted small">Check your connection or ad blocker, then reload. If it persists, the deployment's sign-in settings need attention.</span>
        </div>
      </div>
      <button type="button" className="btn btn-block" onClick={() => location.reload()}>Reload</button>
    </Shell>
  );
}
