import { API_PREFIX } from './common/api-prefix';
import type { Role } from './config/app-config';

export interface ReadyFacts {
  serviceName: string;
  role: Role;
  /** HOST as configured. */
  host: string;
  /** The port actually listened on (PORT=0 picks one). */
  port: number;
  /** Whether ADMIN_API_KEY is set. */
  adminApiKeySet: boolean;
  /** The bootstrap key's text when this start generated it, the only time it can be shown. */
  generatedKey?: string;
}

/**
 * The last lines of the start-up output, plain text for the person at the terminal: where to
 * click, and the administrator key when it was just made, so it is not lost among the logs.
 */
export function readyMessage(facts: ReadyFacts): string {
  const base = `http://${browsableHost(facts.host)}:${facts.port}`;
  const lines = [`${facts.serviceName} is ready${facts.role === 'all' ? '' : ` (ROLE=${facts.role})`}`];
  if (facts.role === 'worker') {
    lines.push(
      `  Health:    ${base}/health`,
      `  Metrics:   ${base}/metrics`,
      '  The API is served by the processes with ROLE=api or ROLE=all.',
    );
  } else {
    lines.push(`  API:       ${base}/${API_PREFIX}`, `  API docs:  ${base}/docs`, `  Dashboard: ${base}/dashboard`);
  }
  if (facts.generatedKey) {
    lines.push(`  Admin API key (every scope, store st_default; shown only now, keep it safe):`, `    ${facts.generatedKey}`);
  } else if (facts.adminApiKeySet) {
    lines.push('  Admin API key: the value of ADMIN_API_KEY');
  } else {
    lines.push('  Admin API key: shown at the first start; if it is lost, restart with ADMIN_API_KEY set to a new one');
  }
  return `\n${lines.join('\n')}\n\n`;
}

/** A listening address one can open: the wildcard addresses become localhost, IPv6 gets brackets. */
export function browsableHost(host: string): string {
  if (host === '' || host === '0.0.0.0' || host === '::' || host === '[::]') return 'localhost';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
