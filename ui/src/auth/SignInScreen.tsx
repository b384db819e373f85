/** The sign-in card around the identity plugin's own screen, and auth errors. */
import { useEffect, useRef } from "react";
import type { ReactNode } from "react";
import { Icon } from "../icons.tsx";
import type { AuthDriver } from "./driver.ts";

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

/**
 * The identity plugin's own sign-in screen (forms or the provider's widget), drawn by its
 * browser module into our card; `message` (e.g. "Your session has expired") above it.
 */
export function PluginSignIn({ driver, message, appName, subtitle, themeButton }: {
  driver: AuthDriver; message: string | null; appName: string; subtitle: string; themeButton: ReactNode;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el || !driver.mountSignIn) return;
    const unmount = driver.mountSignIn(el);
    return () => {
      unmount();
      el.replaceChildren();
    };
  }, [driver]);
  return (
    <Shell appName={appName} subtitle={subtitle} themeButton={themeButton}>
      {message && <p className="auth-info" role="status">{message}</p>}
      <div ref={host} className="sign-in-host" data-testid="sign-in" />
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
