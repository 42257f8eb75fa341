import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** The `settings` key/value table: values generated once and shared by every process. */
@Injectable()
export class SettingsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Returns the stored value, storing `candidate` first if there is none (first writer wins). */
  async getOrCreate(key: string, candidate: string): Promise<string> {
    await this.dataSource.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, candidate]);
    const rows: Array<{ value: string }> = await this.dataSource.query('SELECT value FROM settings WHERE key = $1', [key]);
    return rows[0].value;
  }

  /** The stored value, or undefined when there is none. */
  async get(key: string): Promise<string | undefined> {
    const rows: Array<{ value: string }> = await this.dataSource.query('SELECT value FROM settings WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  async has(key: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM settings WHERE key = $1', [key]);
    return rows.length > 0;
  }

  async delete(key: string): Promise<void> {
    await this.dataSource.query('DELETE FROM settings WHERE key = $1', [key]);
  }
}
