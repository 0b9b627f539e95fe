"""The quant ladder, the quant that fits, and quality per quant from published measurements."""
