import { seqBounds } from './outcome-store';

describe('seqBounds', () => {
  it('answers the lowest and highest seq of a batch as numbers, not as text', () => {
    expect(seqBounds([{ seq: '900' }, { seq: '10000' }, { seq: '12' }])).toEqual(['12', '10000']);
  });

  it('keeps seqs beyond what a double holds exactly', () => {
    // Two seqs of the same millisecond differ only in their low bits.
    expect(seqBounds([{ seq: '1845620937293824001' }, { seq: '1845620937293824000' }])).toEqual(['1845620937293824000', '1845620937293824001']);
  });

  it('bounds a batch of one by its seq on both sides', () => {
    expect(seqBounds([{ seq: '42' }])).toEqual(['42', '42']);
  });
});
