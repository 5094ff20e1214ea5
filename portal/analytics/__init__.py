"""Operations analytics: OSS load imbalance, OST fill, striping, access patterns and
capacity forecasts (DESIGN.md §9)."""
