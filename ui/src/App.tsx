/** The root: settings, theme, the auth provider's driver, then sign-in or the chat. */
import { useEffect, useMemo, useSyncExternalStore } from "react";
import type { AuthDriver } from "./auth/driver.ts";
import { anonymousDriver } from "./auth/anonymous.ts";
import { identityADriver } from "./auth/identity-a.ts";
import type { IdentityADriver } from "./auth/identity-a.ts";
import { identityBDriver } from "./auth/identity-b.ts";
import type { IdentityBDriver } from "./auth/identity-b.ts";
import { AuthError, IdentityANewPassword, IdentityASignIn, IdentityBSignIn } from "./auth/SignInScreen.tsx";
import { ChatApp } from "./chat/ChatApp.tsx";
import { Icon } from "./icons.tsx";
import type { AuthSettings } from "./settings.ts";
import { readSettings } from "./settings.ts";
import { useTheme } from "./theme.ts";

function createDriver(auth: AuthSettings): AuthDriver {
  switch (auth.provider) {
    case "identity_a":
      return identityADriver({ url: auth.url, publishableKey: auth.publishable_key });
    case "identity_b":
      return identityBDriver({ publishableKey: auth.publishable_key, scriptUrl: auth.script_url, widgetGlobal: auth.widget_global || "Clerk" });
    case "none":
      return anonymousDriver("none");
    default:
      return anonymousDriver("anonymous");
  }
}

export function App() {
  const settings = useMemo(readSettings, []);
  const driver = useMemo(() => createDriver(settings.auth), [settings]);
  const snapshot = useSyncExternalStore(driver.subscribe, driver.snapshot);
  const [theme, toggleTheme] = useTheme();

  useEffect(() => { document.title = settings.app_name; }, [settings]);

  const themeButton = (
    <button type="button" className="icon-btn" onClick={toggleTheme} data-testid="theme-toggle" aria-label={theme === "dark" ? "Switch to light theme" : "Switch to dark theme"}>
      <Icon name={theme === "dark" ? "sun" : "moon"} />
    </button>
  );
  const shell = { appName: settings.app_name, subtitle: settings.subtitle, themeButton };

  if (snapshot.status === "loading") {
    return <div className="splash" aria-busy="true"><span className="spinner lg" /></div>;
  }
  if (snapshot.status === "error") {
    return <AuthError message={snapshot.message ?? "Unknown error."} {...shell} />;
  }
  if (snapshot.status === "signed_out") {
    if (driver.provider === "identity_b") return <IdentityBSignIn driver={driver as IdentityBDriver} message={snapshot.message} {...shell} />;
    return <IdentityASignIn key={snapshot.message ?? ""} driver={driver as IdentityADriver} message={snapshot.message} {...shell} />;
  }
  if (driver.provider === "identity_a" && (driver as IdentityADriver).recovering) {
    return <IdentityANewPassword driver={driver as IdentityADriver} {...shell} />;
  }
  return <ChatApp settings={settings} auth={driver} snapshot={snapshot} theme={theme} toggleTheme={toggleTheme} />;
}
