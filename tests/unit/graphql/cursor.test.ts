import { cursorFor, decodeCursor, listTag } from '../../../src/db/pagination';

const ID = '0b6f1c8e-3d2a-4c5b-9e7f-1a2b3c4d5e6f';
const forge = (cursor: Record<string, unknown>) => Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
const code = (run: () => unknown) => {
  try {
    run();
    return 'OK';
  } catch (error) {
    return `${(error as { code?: string }).code}:${String((error as { details?: { field?: string } }).details?.field)}`;
  }
};

describe('decodeCursor', () => {
  const tag = listTag('e.created_at', 'scope');
  const ordinals = listTag('e.ordinal', 'scope');

  it('takes back the cursors it wrote', () => {
    expect(decodeCursor(cursorFor('e.created_at', 'scope', new Date('2024-03-01T10:00:00.123Z'), ID), 'timestamp', tag)).toMatchObject({ k: '2024-03-01T10:00:00.123Z', i: ID });
    expect(decodeCursor(cursorFor('e.ordinal', 'scope', 2_147_483_647, ID), 'integer', ordinals)).toMatchObject({ k: 2_147_483_647 });
  });

  it('refuses keys out of the column range with BAD_USER_INPUT on after, before they reach SQL', () => {
    const forged: [string, Record<string, unknown>, 'timestamp' | 'integer'][] = [
      ['day that does not exist', { k: '2024-02-30T00:00:00.000Z', i: ID, l: tag }, 'timestamp'],
      ['year 0', { k: '0000-01-01T00:00:00.000Z', i: ID, l: tag }, 'timestamp'],
      ['hour 24', { k: '2024-01-01T24:00:00.000Z', i: ID, l: tag }, 'timestamp'],
      ['not a date', { k: 'k', i: ID, l: tag }, 'timestamp'],
      ['number as a timestamp', { k: 1700000000000, i: ID, l: tag }, 'timestamp'],
      ['beyond int4', { k: 2_147_483_648, i: ID, l: ordinals }, 'integer'],
      ['below int4', { k: -2_147_483_649, i: ID, l: ordinals }, 'integer'],
      ['beyond int8', { k: 1e20, i: ID, l: ordinals }, 'integer'],
      ['fraction', { k: 1.5, i: ID, l: ordinals }, 'integer'],
      ['string as an integer', { k: '5', i: ID, l: ordinals }, 'integer'],
      ['id not a uuid', { k: 5, i: 'not-a-uuid', l: ordinals }, 'integer'],
      ['id upper case', { k: 5, i: ID.toUpperCase(), l: ordinals }, 'integer'],
      ['id missing', { k: 5, l: ordinals }, 'integer'],
      ['other list', { k: 5, i: ID, l: tag }, 'integer'],
    ];
    for (const [what, cursor, kind] of forged) {
      expect([what, code(() => decodeCursor(forge(cursor), kind, kind === 'integer' ? ordinals : tag))]).toEqual([what, 'BAD_USER_INPUT:after']);
    }
    for (const raw of ['', 'null', forge(null as never), Buffer.from('[1,2]').toString('base64'), 'a'.repeat(10_000), '%%%', Buffer.from('{"k":1').toString('base64url')]) {
      expect([raw.slice(0, 20), code(() => decodeCursor(raw, 'integer', ordinals))]).toEqual([raw.slice(0, 20), 'BAD_USER_INPUT:after']);
    }
  });
});
