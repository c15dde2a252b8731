/**
 * Placeholder rendering for prompt parts. `{{name}}` (spaces inside the braces allowed) is
 * replaced in one pass, so text substituted in (a report containing "{{report}}") is never
 * expanded again. Unknown placeholders are left verbatim, so templates written for other tools
 * pass through unharmed.
 */
const PLACEHOLDER_RE = /\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g;

export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER_RE, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(values, name) ? values[name]! : whole,
  );
}

/** Names of the placeholders a template uses. */
export function templatePlaceholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER_RE)].map((m) => m[1]!))];
}
