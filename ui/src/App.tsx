/** The root: settings, theme, the auth provider's driver, then sign-in or the chat. */
import { useEffect, useMemo, useSyncExternalStore } from "react";
import type { AuthDriver } from "./auth/driver.ts";
import { anonymousDriver } from "./auth/anonymous.ts";
import { pluginDriver } from "./auth/plugin.ts";
import { AuthError, PluginSignIn } from "./auth/SignInScreen.tsx";
import { ChatApp } from "./chat/ChatApp.tsx";
import { Icon } from "./icons.tsx";
import type { AuthSettings } from "./settings.ts";
import { readSettings } from "./settings.ts";
import { useTheme } from "./theme.ts";

/** The identity plugin's browser module when it has one, else the token-less driver. */
function createDriver(auth: AuthSettings): AuthDriver {
  return auth.module ? pluginDriver({ ...auth, module: auth.module }) : anonymousDriver(auth.provider);
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
    return <PluginSignIn key={snapshot.message ?? ""} driver={driver} message={snapshot.message} {...shell} />;
  }
  return <ChatApp settings={settings} auth={driver} snapshot={snapshot} theme={theme} toggleTheme={toggleTheme} />;
}
