/**
 * Read access to a project directory, relative to its root, skipping dotfiles (spec 2.1:
 * "Dotfiles are skipped on upload") and collecting what goes into the bundle.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export class ProjectFiles {
  readonly root: string;
  /** Paths shown in messages are relative to the current directory. */
  private readonly shownFrom: string;

  constructor(root: string, shownFrom: string) {
    this.root = root;
    this.shownFrom = shownFrom;
  }

  display(path: string): string {
    const rel = relative(this.shownFrom, join(this.root, path));
    return rel.startsWith("..") && rel.split("/").filter((s) => s === "..").length > 2 ? join(this.root, path) : rel || ".";
  }

  exists(path: string): boolean {
    try {
      statSync(join(this.root, path));
      return true;
    } catch {
      return false;
    }
  }

  isDirectory(path: string): boolean {
    try {
      return statSync(join(this.root, path)).isDirectory();
    } catch {
      return false;
    }
  }

  readBytes(path: string): Uint8Array | null {
    try {
      return new Uint8Array(readFileSync(join(this.root, path)));
    } catch {
      return null;
    }
  }

  readText(path: string): string | null {
    const bytes = this.readBytes(path);
    return bytes === null ? null : new TextDecoder().decode(bytes);
  }

  /** Entries of a directory, sorted, dotfiles skipped; empty when it does not exist. */
  list(dir: string): Array<{ name: string; isDirectory: boolean }> {
    try {
      return readdirSync(join(this.root, dir), { withFileTypes: true })
        .filter((e) => !e.name.startsWith("."))
        .filter((e) => e.isDirectory() || e.isFile())
        .map((e) => ({ name: e.name, isDirectory: e.isDirectory() }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch {
      return [];
    }
  }

  /** Every file under `dir`, recursively, sorted, dotfiles skipped. */
  walk(dir: string): string[] {
    const out: string[] = [];
    for (const e of this.list(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) out.push(...this.walk(p));
      else out.push(p);
    }
    return out;
  }
}
