/**
 * Cutting the report to the run's context limit (the RADS paper truncated input at 10,000
 * tokens). Tokens are approximated as 4 characters, the usual rule of thumb for Latin-script
 * text; the cut never splits a surrogate pair.
 */
import { ExtractionError } from './errors';
import type { ContextLimit, ReportInput } from './types';

export const CHARS_PER_TOKEN = 4;

export function maxReportChars(limit: ContextLimit | null | undefined): number | null {
  if (!limit) return null;
  const caps: number[] = [];
  if (limit.maxChars != null) caps.push(limit.maxChars);
  if (limit.maxTokens != null) caps.push(limit.maxTokens * CHARS_PER_TOKEN);
  for (const c of caps) {
    if (!Number.isFinite(c) || c < 0) throw new ExtractionError('BAD_INPUT', `bad context limit ${c}`);
  }
  return caps.length > 0 ? Math.floor(Math.min(...caps)) : null;
}

export function applyContextLimit(
  report: ReportInput,
  limit: ContextLimit | null | undefined,
): { report: ReportInput; truncated: boolean } {
  const cap = maxReportChars(limit);
  if (cap === null || report.text.length <= cap) return { report, truncated: false };
  let text = report.text.slice(0, cap);
  const last = text.charCodeAt(text.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) text = text.slice(0, -1);
  return { report: { id: report.id, text }, truncated: true };
}
