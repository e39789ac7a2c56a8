/**
 * Sorts a copy of `items` exactly as Go's sort.SliceStable does: insertion sort over blocks of 20,
 * then in-place symmetric merges of ever larger blocks. With a consistent `less` any stable sort
 * gives the same answer; the API server's strategic merge orders lists with a `less` that answers
 * true whenever an item is missing from the order it sorts by, and then only the very same steps
 * give the order kubectl gives.
 */
export function goStableSort<T>(items: readonly T[], less: (a: T, b: T) => boolean): T[] {
  const sorter = new GoStableSorter([...items], less);
  sorter.sort();
  return sorter.data;
}

const BLOCK = 20;

class GoStableSorter<T> {
  constructor(
    readonly data: T[],
    private readonly lessThan: (a: T, b: T) => boolean,
  ) {}

  sort(): void {
    const n = this.data.length;
    let a = 0;
    for (let b = BLOCK; b <= n; b += BLOCK) {
      this.insertionSort(a, b);
      a = b;
    }
    this.insertionSort(a, n);
    for (let size = BLOCK; size < n; size *= 2) {
      a = 0;
      for (let b = 2 * size; b <= n; b += 2 * size) {
        this.symMerge(a, a + size, b);
        a = b;
      }
      if (a + size < n) this.symMerge(a, a + size, n);
    }
  }

  private less(i: number, j: number): boolean {
    return this.lessThan(this.data[i] as T, this.data[j] as T);
  }

  private swap(i: number, j: number): void {
    const held = this.data[i] as T;
    this.data[i] = this.data[j] as T;
    this.data[j] = held;
  }

  private insertionSort(a: number, b: number): void {
    for (let i = a + 1; i < b; i++) for (let j = i; j > a && this.less(j, j - 1); j--) this.swap(j, j - 1);
  }

  // Merges the sorted runs data[a:m] and data[m:b] in place (Go's SymMerge).
  private symMerge(a: number, m: number, b: number): void {
    if (m - a === 1) this.insertFirst(a, m, b);
    else if (b - m === 1) this.insertLast(a, m);
    else this.splitAndMerge(a, m, b);
  }

  private splitAndMerge(a: number, m: number, b: number): void {
    const mid = (a + b) >>> 1;
    const n = mid + m;
    let start = m > mid ? n - b : a;
    let r = Math.min(m, mid);
    const p = n - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (this.less(p - c, c)) r = c;
      else start = c + 1;
    }
    const end = n - start;
    if (start < m && m < end) this.rotate(start, m, end);
    if (a < start && start < mid) this.symMerge(a, start, mid);
    if (mid < end && end < b) this.symMerge(mid, end, b);
  }

  // data[a] alone before the run data[m:b]: find its place by binary search and move it there.
  private insertFirst(a: number, m: number, b: number): void {
    let i = m;
    let j = b;
    while (i < j) {
      const h = (i + j) >>> 1;
      if (this.less(h, a)) i = h + 1;
      else j = h;
    }
    for (let k = a; k < i - 1; k++) this.swap(k, k + 1);
  }

  // data[m] alone after the run data[a:m]: find its place by binary search and move it there.
  private insertLast(a: number, m: number): void {
    let i = a;
    let j = m;
    while (i < j) {
      const h = (i + j) >>> 1;
      if (this.less(m, h)) j = h;
      else i = h + 1;
    }
    for (let k = m; k > i; k--) this.swap(k, k - 1);
  }

  // Swaps the blocks data[a:m] and data[m:b].
  private rotate(a: number, m: number, b: number): void {
    let i = m - a;
    let j = b - m;
    while (i !== j) {
      if (i > j) {
        this.swapRange(m - i, m, j);
        i -= j;
      } else {
        this.swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    this.swapRange(m - i, m, i);
  }

  private swapRange(a: number, b: number, n: number): void {
    for (let i = 0; i < n; i++) this.swap(a + i, b + i);
  }
}
