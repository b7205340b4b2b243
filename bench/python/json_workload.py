# bench/python: an allocation-heavy real program for the recorder's per-allocation cost (issue 14).
# Run with PYTHONMALLOC=malloc so that every Python object goes through malloc: 60,000 dicts built
# in a sliding window of 2,500-5,000, then json.dumps / json.loads of the window three times.
import json

data = []
for i in range(60000):
    d = {"id": i, "name": "item%d" % i, "tags": ["a%d" % (i % 7), "b%d" % (i % 11)],
         "v": [j * 1.5 for j in range(i % 9)]}
    data.append(d)
    if len(data) > 5000:
        data = data[2500:]
s = json.dumps(data)
for _ in range(3):
    x = json.loads(s)
    s = json.dumps(x, sort_keys=True)
print(len(s))
