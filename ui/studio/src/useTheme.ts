/** Light/dark theme: the system's at first, then the user's choice, kept in local storage. */
import { useEffect, useState } from "react";

export type Theme = "light" | "dark";
const KEY = "agentcli.studio.theme";

export function useTheme(): [Theme, () => void] {
  const [theme, setTheme] = useState<Theme>(() => (document.documentElement.dataset.theme === "dark" ? "dark" : "light"));
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  const toggle = () => {
    const next: Theme = theme === "dark" ? "light" : "dark";
    try {
      localStorage.setItem(KEY, next);
    } catch { /* ignore */ }
    setTheme(next);
  };
  return [theme, toggle];
}
