import { isDatabaseUnavailable, isForeignKeyViolation, isStatementTimeout, isUnstorableText } from './database-errors';

describe('database errors', () => {
  it('recognises a foreign-key violation, also wrapped by TypeORM', () => {
    expect(isForeignKeyViolation({ code: '23503' })).toBe(true);
    expect(isForeignKeyViolation({ name: 'QueryFailedError', driverError: { code: '23503' } })).toBe(true);
    expect(isForeignKeyViolation({ code: '23505' })).toBe(false);
    expect(isForeignKeyViolation(new Error('23503'))).toBe(false);
  });

  it('recognises a statement cancelled by its statement_timeout, also wrapped by TypeORM', () => {
    expect(isStatementTimeout({ code: '57014' })).toBe(true);
    expect(isStatementTimeout({ name: 'QueryFailedError', driverError: { code: '57014' } })).toBe(true);
    expect(isStatementTimeout({ code: '57P01' })).toBe(false);
  });

  it('recognises text PostgreSQL cannot store (NUL, bad UTF-8)', () => {
    expect(isUnstorableText({ code: '22021' })).toBe(true);
    expect(isUnstorableText({ driverError: { code: '22P05' } })).toBe(true);
    expect(isUnstorableText({ code: '23503' })).toBe(false);
  });

  it('tells an unreachable database from a bad query', () => {
    expect(isDatabaseUnavailable({ code: 'ECONNREFUSED' })).toBe(true);
    expect(isDatabaseUnavailable({ driverError: { code: '57P01' } })).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable({ code: '42601' })).toBe(false);
  });
});
